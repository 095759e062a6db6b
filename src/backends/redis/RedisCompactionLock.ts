import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { InvalidArgumentError } from '../../errors.js';
import { defaultLogger, type Logger } from '../../logging.js';
import { requireOptional } from '../../optionalDependency.js';
import type { RedisClient } from './RedisSessionRepository.js';
import { RedisConnections } from './RedisConnections.js';
import { RedisScript } from './RedisScript.js';
import { requireStorableText } from '../../validation/inputs.js';
import type { CompactionLease, CompactionLock, CompactionLockAcquireOptions } from '../../lock/CompactionLock.js';
import { requireAcquireOptions, requireLeaseMs } from '../../lock/leaseOptions.js';
import { waitForLease } from '../../lock/waitForLease.js';

export interface RedisCompactionLockOptions {
  /** Used to create (and later quit) a client when `client` is not given. */
  url?: string;
  /** A client owned by the caller (the repository's may be shared): `close()` leaves it connected. */
  client?: RedisClient;
  /** Key prefix; default 'sc', the repository's, so a lock key shares its session's hash tag. */
  prefix?: string;
  /** The longest one call waits for Redis; default 5000. */
  commandTimeoutMs?: number;
  logger?: Logger;
}

const PREFIX = /^[a-z0-9_.:-]+$/i;

// Compare-and-act on the holder's token, so a holder whose lease lapsed can never extend or delete its successor's.
const RENEW = new RedisScript(
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end",
);
const RELEASE = new RedisScript(
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end",
);

/**
 * Redis lease: `SET <prefix>:{<sessionId>}:compaction-lock <token> NX PX <leaseMs>`; renewal and release
 * compare the token in a script. Redis expires the key itself, so a holder killed mid-summary blocks the
 * session for at most one lease. The fencing token is an INCR of one counter taken after the SET succeeded,
 * so a later holder always draws a larger one. Single-instance Redis (or a primary): a failover that loses
 * the key can grant a second lease — the repository's compare-and-set still keeps the log consistent.
 */
export class RedisCompactionLock implements CompactionLock {
  private readonly client: Redis;
  private readonly connections: RedisConnections;
  private readonly prefix: string;

  constructor(options: RedisCompactionLockOptions = {}) {
    const opts = options ?? {};
    const prefix = opts.prefix ?? 'sc';
    if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
      throw new InvalidArgumentError(`prefix must match ${String(PREFIX)} (got '${String(prefix)}')`);
    }
    this.prefix = prefix;
    if (opts.client !== undefined && opts.client !== null) this.client = opts.client as Redis;
    else {
      if (typeof opts.url !== 'string' || opts.url.trim() === '') {
        throw new InvalidArgumentError('RedisCompactionLock needs a url (or REDIS_URL) or a client');
      }
      const ioredis = requireOptional<typeof import('ioredis')>('ioredis', 'RedisCompactionLock');
      this.client = new ioredis.Redis(opts.url);
    }
    const commandTimeoutMs = opts.commandTimeoutMs ?? 5000;
    if (!Number.isSafeInteger(commandTimeoutMs) || commandTimeoutMs <= 0) {
      throw new InvalidArgumentError(`commandTimeoutMs must be a positive integer (got ${String(commandTimeoutMs)})`);
    }
    this.connections = new RedisConnections(
      this.client,
      this.client !== opts.client,
      { commandTimeoutMs, failFastWhenDisconnected: false },
      opts.logger ?? defaultLogger(),
    );
  }

  async acquire(sessionId: string, options: CompactionLockAcquireOptions): Promise<CompactionLease | null> {
    requireStorableText(sessionId, 'sessionId');
    const { leaseMs, waitMs } = requireAcquireOptions(options);
    return waitForLease(() => this.tryAcquire(sessionId, leaseMs), waitMs);
  }

  async renew(lease: CompactionLease, leaseMs: number): Promise<CompactionLease | null> {
    requireLeaseMs(leaseMs);
    const start = Date.now();
    const renewed = await this.connections.idempotent('renewCompactionLease', () =>
      RENEW.run(this.client, [this.key(lease.sessionId)], [lease.token, leaseMs]),
    );
    return Number(renewed) === 1 ? { ...lease, expiresAt: new Date(start + leaseMs) } : null;
  }

  async release(lease: CompactionLease): Promise<void> {
    await this.connections.idempotent('releaseCompactionLease', () =>
      RELEASE.run(this.client, [this.key(lease.sessionId)], [lease.token]),
    );
  }

  async close(): Promise<void> {
    await this.connections.close();
  }

  private async tryAcquire(sessionId: string, leaseMs: number): Promise<CompactionLease | null> {
    const token = randomUUID();
    const start = Date.now();
    // Not retried blindly: a lost reply to a SET that succeeded would make the retry see our own lease as taken.
    const set = await this.connections.once('acquireCompactionLease', () =>
      this.client.set(this.key(sessionId), token, 'PX', leaseMs, 'NX'),
    );
    if (set !== 'OK') return null;
    const lease = { sessionId, token, fencingToken: 0, expiresAt: new Date(start + leaseMs) };
    try {
      lease.fencingToken = await this.connections.idempotent('compactionLeaseFence', () =>
        this.client.incr(`${this.prefix}:compaction-lock-fence`),
      );
    } catch (error) {
      // A lease without a fencing token is not handed out: give it back rather than let it block until expiry.
      await this.release(lease).catch(() => undefined);
      throw error;
    }
    return lease;
  }

  private key(sessionId: string): string {
    return `${this.prefix}:{${sessionId}}:compaction-lock`;
  }
}
