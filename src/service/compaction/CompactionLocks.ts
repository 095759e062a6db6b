import { withCompactionLease, resolveLockSettings, type ResolvedLockSettings } from '../../lock/compactionLease.js';
import type { CompactionLock, CompactionLockSettings } from '../../lock/CompactionLock.js';
import type { Logger } from '../../logging.js';
import { KeyedMutex } from '../KeyedMutex.js';

/**
 * The two locks a compaction or a revert of one session runs under: the in-process one (one at a time per
 * session in this process, so concurrent requests never start two summarisations) and, when configured, the
 * cross-process compaction lease.
 */
export class CompactionLocks {
  private readonly mutex: KeyedMutex | null;
  private settings: ResolvedLockSettings | null;

  constructor(
    inProcess: boolean,
    lease: CompactionLock | CompactionLockSettings | null | undefined,
    private readonly logger: Logger,
  ) {
    this.mutex = inProcess ? new KeyedMutex() : null;
    this.settings = resolveLockSettings(lease);
  }

  /** The cross-process lease as configured now; null without one. */
  get lease(): ResolvedLockSettings | null {
    return this.settings;
  }

  /** Sets (or with null removes) the cross-process lease. */
  setLease(lease: CompactionLock | CompactionLockSettings | null): void {
    this.settings = resolveLockSettings(lease);
  }

  /** Runs `work` under the session's in-process lock (at once when that lock is disabled). */
  inProcess<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    return this.mutex === null ? work() : this.mutex.run(sessionId, work);
  }

  /**
   * Runs `work` under both locks; `held()` says whether the lease is still held (always true without one).
   * When another holder keeps the lease past its `waitMs`, `whenLeaseHeld` runs instead.
   */
  exclusive<T>(sessionId: string, work: (held: () => boolean) => Promise<T>, whenLeaseHeld: () => Promise<T>): Promise<T> {
    return this.inProcess(sessionId, () => {
      const settings = this.settings;
      if (settings === null) return work(() => true);
      return withCompactionLease(settings, sessionId, this.logger, work, whenLeaseHeld);
    });
  }
}
