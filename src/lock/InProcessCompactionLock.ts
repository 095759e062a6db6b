import { randomUUID } from 'node:crypto';
import { requireStorableText } from '../validation/inputs.js';
import type { CompactionLease, CompactionLock, CompactionLockAcquireOptions } from './CompactionLock.js';
import { requireAcquireOptions, requireLeaseMs } from './leaseOptions.js';
import { waitForLease } from './waitForLease.js';

interface Holder {
  token: string;
  expiresAt: number;
}

/**
 * The compaction lock of one process (what `lockCompactions` gives without a lock), as a CompactionLock:
 * for a single instance, and for tests. Leases expire like the distributed ones, so a compaction that never
 * finishes does not block its session forever. One counter serves every session's fencing tokens: it only
 * has to grow.
 */
export class InProcessCompactionLock implements CompactionLock {
  private readonly holders = new Map<string, Holder>();
  private readonly waiters = new Map<string, (() => void)[]>();
  private fence = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async acquire(sessionId: string, options: CompactionLockAcquireOptions): Promise<CompactionLease | null> {
    requireStorableText(sessionId, 'sessionId');
    const { leaseMs, waitMs } = requireAcquireOptions(options);
    return waitForLease(
      async () => this.tryAcquire(sessionId, leaseMs),
      waitMs,
      () => this.released(sessionId),
    );
  }

  async renew(lease: CompactionLease, leaseMs: number): Promise<CompactionLease | null> {
    requireLeaseMs(leaseMs);
    const holder = this.current(lease.sessionId);
    if (holder?.token !== lease.token) return null;
    holder.expiresAt = this.now() + leaseMs;
    return { ...lease, expiresAt: new Date(holder.expiresAt) };
  }

  async release(lease: CompactionLease): Promise<void> {
    if (this.current(lease.sessionId)?.token !== lease.token) return;
    this.holders.delete(lease.sessionId);
    const waiting = this.waiters.get(lease.sessionId) ?? [];
    this.waiters.delete(lease.sessionId);
    for (const wake of waiting) wake();
  }

  private tryAcquire(sessionId: string, leaseMs: number): CompactionLease | null {
    if (this.current(sessionId) !== undefined) return null;
    const holder = { token: randomUUID(), expiresAt: this.now() + leaseMs };
    this.holders.set(sessionId, holder);
    return { sessionId, token: holder.token, fencingToken: ++this.fence, expiresAt: new Date(holder.expiresAt) };
  }

  /** The live holder; an expired one is dropped on sight. */
  private current(sessionId: string): Holder | undefined {
    const holder = this.holders.get(sessionId);
    if (holder !== undefined && holder.expiresAt <= this.now()) {
      this.holders.delete(sessionId);
      return undefined;
    }
    return holder;
  }

  private released(sessionId: string): Promise<void> {
    return new Promise((resolve) => {
      const list = this.waiters.get(sessionId) ?? [];
      list.push(resolve);
      this.waiters.set(sessionId, list);
    });
  }
}
