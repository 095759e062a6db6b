/**
 * A held compaction lease: the right to summarise one session until `expiresAt` (or until released).
 * `fencingToken` grows with every grant for the session, so anything the holder writes elsewhere can be
 * rejected when a later holder (with a larger token) has already written.
 */
export interface CompactionLease {
  readonly sessionId: string;
  /** Identifies this grant; only its holder can renew or release it. */
  readonly token: string;
  readonly fencingToken: number;
  readonly expiresAt: Date;
}

export interface CompactionLockAcquireOptions {
  /** How long the lease lasts unless renewed, in milliseconds. */
  leaseMs: number;
  /** How long to wait for a lease held by someone else before giving up with null; 0 (default): try once. */
  waitMs?: number;
}

/**
 * At most one compaction of a session at a time, across every process sharing the lock's store.
 * Implementations: InProcessCompactionLock (root), SqliteCompactionLock, PostgresCompactionLock and
 * RedisCompactionLock (the backend entries). Leases expire so that a crashed holder never blocks forever.
 */
export interface CompactionLock {
  /** A lease, or null when someone else holds one (after waiting up to `waitMs`). */
  acquire(sessionId: string, options: CompactionLockAcquireOptions): Promise<CompactionLease | null>;
  /** Extends a lease still held to `leaseMs` from now; null when it was lost (expired and taken, or released). */
  renew(lease: CompactionLease, leaseMs: number): Promise<CompactionLease | null>;
  /** Gives a lease back; a lease already lost is ignored. */
  release(lease: CompactionLease): Promise<void>;
  /** Releases what the lock owns (connections it opened). */
  close?(): Promise<void>;
}

/** The service's `compactionLock` option in full; a bare CompactionLock means these defaults. */
export interface CompactionLockSettings {
  lock: CompactionLock;
  /** Lease duration, renewed every third of it while the summary runs; default 30 000 ms. */
  leaseMs?: number;
  /**
   * How long a compaction waits for another holder to finish; default 0: it returns at once with a no-op
   * result whose `skipReason` is 'lock-held'.
   */
  waitMs?: number;
}

export const DEFAULT_LEASE_MS = 30_000;
