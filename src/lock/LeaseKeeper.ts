import type { Logger } from '../logging.js';
import type { CompactionLease, CompactionLock } from './CompactionLock.js';

/**
 * Keeps a lease alive while a compaction runs: renews it every third of its duration, so a summary may
 * take longer than one lease, while a holder that dies stops renewing and its lease lapses. `held()` is
 * false from the moment a renewal says the lease was lost, or its expiry passed without a renewal.
 */
export class LeaseKeeper {
  private lease: CompactionLease;
  private lost = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly lock: CompactionLock,
    lease: CompactionLease,
    private readonly leaseMs: number,
    private readonly logger: Logger,
  ) {
    this.lease = lease;
    this.timer = setInterval(() => void this.renew(), Math.max(1, Math.floor(leaseMs / 3)));
    // A pending renewal must not keep a process alive that has nothing else to do.
    this.timer.unref();
  }

  get fencingToken(): number {
    return this.lease.fencingToken;
  }

  held(): boolean {
    return !this.lost && this.lease.expiresAt.getTime() > Date.now();
  }

  /** Stops renewing and gives the lease back; a failed release is logged (the lease lapses by itself). */
  async release(): Promise<void> {
    clearInterval(this.timer);
    try {
      await this.lock.release(this.lease);
    } catch (error) {
      this.logger.warn('releasing a compaction lease failed; it expires by itself', {
        sessionId: this.lease.sessionId,
        error: String(error),
      });
    }
  }

  private async renew(): Promise<void> {
    if (this.lost) return;
    try {
      const renewed = await this.lock.renew(this.lease, this.leaseMs);
      if (renewed === null) {
        this.lost = true;
        this.logger.warn('compaction lease lost while compacting; the result will not be committed', {
          sessionId: this.lease.sessionId,
        });
      } else this.lease = renewed;
    } catch (error) {
      // A store hiccup: keep the current expiry and try again at the next tick.
      this.logger.warn('renewing a compaction lease failed', { sessionId: this.lease.sessionId, error: String(error) });
    }
  }
}
