import { InvalidArgumentError } from '../../errors.js';
import { EventFilter } from '../../filter/EventFilter.js';
import { isAtomicInsertRepository } from '../../repository/AtomicInsertRepository.js';
import {
  isErasureRepository,
  ownerHash,
  sessionDeletedError,
  type ErasedSession,
  type Tombstone,
} from '../../repository/ErasureRepository.js';
import { countKinds } from '../../repository/eventKinds.js';
import { isUserErasureRepository } from '../../repository/UserErasureRepository.js';
import type { Session } from '../../session/Session.js';
import type { DataLifecycleContext } from './DataLifecycleContext.js';
import { reclaimStorage } from './reclaimStorage.js';
import { emptyErasureReport, mergeErasureReports, type ErasureReason, type ErasureReport } from './reports.js';

/** eraseUser repeats its sweep while sessions of the user keep appearing (created concurrently), this often. */
const MAX_USER_SWEEPS = 5;
/**
 * How long the mark of a user erasure in progress blocks new sessions of the user, renewed before every
 * sweep: long enough for one sweep, short enough that a crashed erasure does not lock the user out for long.
 */
const USER_ERASURE_MARK_MS = 10 * 60_000;

/**
 * Deletes sessions with their logs and tombstones, and answers for tombstones when a session is created
 * or a write hits a deleted one.
 */
export class SessionEraser {
  private warnedNoErase = false;

  constructor(
    private readonly ctx: DataLifecycleContext,
    /** 0: no tombstones; Infinity: tombstones never expire. */
    readonly tombstoneTtlMs: number,
  ) {}

  /** Erases one session; a report with `sessions: 0` when it does not exist (or is not idle). */
  async eraseSession(id: string, reason: ErasureReason, idleBefore?: Date): Promise<ErasureReport> {
    const { repository } = this.ctx;
    const now = this.ctx.now();
    let erased: ErasedSession | null;
    let tombstones = 0;
    if (isErasureRepository(repository)) {
      const tombstone = this.tombstoneTtlMs > 0 ? { deletedAt: now, expiresAt: this.tombstoneExpiry(now) } : null;
      erased = await repository.eraseSession(id, { tombstone, ...(idleBefore !== undefined ? { idleBefore } : {}) });
      if (erased !== null && tombstone !== null) tombstones = 1;
    } else {
      erased = await this.eraseWithoutTombstone(id);
    }
    const report = emptyErasureReport();
    if (erased === null) return report;
    const { sessionId, userId, ...counts } = erased;
    Object.assign(report, counts, { sessions: 1, sessionIds: [sessionId], tombstones });
    this.ctx.emit('sessionErased', {
      sessionId,
      userId,
      reason,
      forgotten: (kind, count) => {
        if (typeof kind === 'string' && Number.isFinite(count)) report.derived[kind] = (report.derived[kind] ?? 0) + count;
      },
    });
    this.ctx.logger.info('session erased', { sessionId, reason, ...counts, tombstone: tombstones === 1 });
    return report;
  }

  /**
   * Every session of the user, swept again while new ones appear; sessions created after it returns are not
   * included. On a UserErasureRepository the user is marked first: from then until the last sweep, every
   * write that would add a session of the user (create, fork, copy, import) is refused inside the store, so
   * the sweeps see everything and nothing written before the erasure began can reappear after it.
   */
  async eraseUser(userId: string): Promise<ErasureReport> {
    const { repository } = this.ctx;
    const total = emptyErasureReport();
    const marks = isUserErasureRepository(repository);
    try {
      for (let sweep = 0; sweep < MAX_USER_SWEEPS; sweep++) {
        if (marks) await repository.beginUserErasure(userId, new Date(Date.now() + USER_ERASURE_MARK_MS));
        const sessions = await repository.findByUserId(userId);
        if (sessions.length === 0) break;
        for (const s of sessions) mergeErasureReports(total, await this.eraseSession(s.id, 'erase-user'));
      }
    } finally {
      if (marks)
        await repository.endUserErasure(userId).catch((error: unknown) =>
          // The mark expires by itself; until then the user's new sessions are refused.
          this.ctx.logger.warn('could not remove the mark of a user erasure', { error: String(error) }),
        );
    }
    return total;
  }

  /**
   * Inserts a session with a caller-chosen id. A live tombstone refuses it, unless `allowRecreate` and the
   * caller is the deleted session's owner; an expired one is removed first. False when the id is taken.
   */
  async insertChosenId(session: Session, allowRecreate: boolean): Promise<boolean> {
    const { repository } = this.ctx;
    if (isErasureRepository(repository)) {
      const tombstone = await repository.findTombstone(session.id);
      if (tombstone !== null) {
        if (this.isExpired(tombstone)) {
          await repository.purgeTombstones(this.ctx.now(), 1, session.id);
        } else if (!allowRecreate || tombstone.ownerHash !== ownerHash(session.userId)) {
          throw sessionDeletedError(session.id, tombstone);
        } else {
          return repository.recreateSession(session);
        }
      }
    }
    if (isAtomicInsertRepository(repository)) return repository.saveIfAbsent(session);
    // Not atomic: a custom repository without saveIfAbsent gets a check, then a save.
    return (await repository.findById(session.id)) === null && (await repository.save(session)) !== null;
  }

  /**
   * Turns the repository's "Session not found: <id>" into one that says the session was deleted, when a
   * tombstone shows it was; any other error is returned as it is.
   */
  async explain(error: unknown, sessionId: string): Promise<unknown> {
    if (!(error instanceof InvalidArgumentError) || error.message !== `Session not found: ${sessionId}`) return error;
    const { repository } = this.ctx;
    if (!isErasureRepository(repository)) return error;
    const tombstone = await repository.findTombstone(sessionId).catch(() => null);
    if (tombstone === null) return error;
    return new InvalidArgumentError(
      `Session not found: ${sessionId} (deleted at ${tombstone.deletedAt.toISOString()}; ` +
        'appends and compactions of a deleted session are refused)',
      { cause: error },
    );
  }

  /** Removes tombstones that expired before now, in batches; returns how many. */
  async purgeExpiredTombstones(batchSize: number, onBatch?: (removed: number) => void): Promise<number> {
    const { repository } = this.ctx;
    if (!isErasureRepository(repository)) return 0;
    const now = this.ctx.now();
    let total = 0;
    for (;;) {
      const removed = await repository.purgeTombstones(now, batchSize);
      total += removed;
      onBatch?.(removed);
      if (removed < batchSize) return total;
    }
  }

  /**
   * Every session that expired before `before`, erased (with tombstones), then the tombstones that expired
   * themselves; returns how many sessions were erased.
   */
  async eraseExpired(before: Date): Promise<number> {
    const ids = await this.ctx.repository.findExpiredSessionIds(before);
    let erased = 0;
    for (const id of ids) erased += (await this.eraseSession(id, 'expired')).sessions;
    await this.purgeExpiredTombstones(1000);
    if (erased > 0) await reclaimStorage(this.ctx.repository);
    return erased;
  }

  private tombstoneExpiry(now: Date): Date | null {
    return Number.isFinite(this.tombstoneTtlMs) ? new Date(now.getTime() + this.tombstoneTtlMs) : null;
  }

  private isExpired(t: Tombstone): boolean {
    return t.expiresAt !== null && t.expiresAt < this.ctx.now();
  }

  /** A repository that is not an ErasureRepository: counts read first, then delete; no tombstone, not atomic. */
  private async eraseWithoutTombstone(id: string): Promise<ErasedSession | null> {
    const { repository } = this.ctx;
    if (!this.warnedNoErase) {
      this.warnedNoErase = true;
      this.ctx.logger.warn('the repository is not an ErasureRepository: deleted ids get no tombstone and can be created again');
    }
    const session = await repository.findById(id);
    if (session === null) return null;
    const counts = countKinds(await repository.findEvents(id, EventFilter.all()));
    await repository.delete(id);
    return { sessionId: id, userId: session.userId, ...counts };
  }
}
