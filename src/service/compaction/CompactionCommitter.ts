import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CompactionResult } from '../../compaction/CompactionResult.js';
import { EventFilter } from '../../filter/EventFilter.js';
import type { Logger } from '../../logging.js';
import type { CompactionRecordRange } from '../../repository/CompactionRecord.js';
import { isCompactionRecordRepository } from '../../repository/CompactionRecordRepository.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import type { CompactionTelemetry } from '../../telemetry/CompactionTelemetry.js';
import { buildCompactionRecord } from './compactionRecords.js';
import { verifyCompactionResult } from './verifyCompactionResult.js';

export interface CompactionCommitterOptions {
  repository: SessionRepository;
  logger: Logger;
  now: () => Date;
  /**
   * What to do when the CAS write loses. 'skip': nothing is committed. 'rebase': if the loss was caused only
   * by appends (the window read is still an unchanged prefix), the same result is committed with the new
   * events appended to the retained window — the summary is not thrown away.
   */
  conflictPolicy: 'skip' | 'rebase';
  /** Rebase attempts before giving up. */
  maxRebaseAttempts: number;
}

/** What a committed compaction is recorded as. */
export interface CommitTarget {
  sessionId: string;
  /** The strategy's name, kept in the compaction record. */
  strategy: string;
  /** The trigger's name, kept in the compaction record. */
  trigger?: string;
  /** The range the compaction was limited to; null for the whole window. */
  range: CompactionRecordRange | null;
}

export interface CommittedCompaction {
  /** The result as committed (after a rebase: with the appended events in its window). */
  result: CompactionResult;
  rebased: boolean;
  /** The compaction record's id, when the repository keeps records. */
  compactionId?: string;
  /** The version the write was committed against. */
  versionBefore: number;
}

/**
 * Commits a strategy's result with compare-and-set: `compactEvents(…, version)` against the version read
 * before the window, recorded as a compaction unit in the same atomic step when the repository keeps
 * records. A lost CAS is never retried by calling the strategy again; with conflictPolicy 'rebase' the same
 * result may be re-committed over appends that landed meanwhile.
 */
export class CompactionCommitter {
  constructor(private readonly options: CompactionCommitterOptions) {}

  /**
   * The committed compaction, or null when the CAS was lost (and could not be rebased): nothing was written.
   * A result that loses or invents events is refused first (IllegalStateError naming the strategy).
   */
  async commit(
    target: CommitTarget,
    window: readonly SessionEvent[],
    result: CompactionResult,
    version: number,
    telemetry: CompactionTelemetry,
  ): Promise<CommittedCompaction | null> {
    // Every write of a strategy's result passes here, whatever strategy or range produced it.
    verifyCompactionResult(target.strategy, window, result);
    const committed = await this.write(target, window, result.archivedEvents, result.compactedEvents, version);
    if (committed !== false) return { result, rebased: false, versionBefore: version, ...committed };
    telemetry.casConflict();
    return this.options.conflictPolicy === 'rebase' ? this.rebase(target, window, result) : null;
  }

  /**
   * Re-commits `result` on top of appends that happened meanwhile. Safe only when the window we read is
   * still an unchanged prefix of the current one: then the new events simply follow the retained window.
   */
  private async rebase(
    target: CommitTarget,
    read: readonly SessionEvent[],
    result: CompactionResult,
  ): Promise<CommittedCompaction | null> {
    const { repository, logger, maxRebaseAttempts } = this.options;
    const { sessionId } = target;
    for (let attempt = 0; attempt < maxRebaseAttempts; attempt++) {
      // Writers that lost together must not retry in lockstep: a short random pause, growing per attempt.
      if (attempt > 0) await sleep(Math.random() * 2 ** attempt);
      const version = await repository.getEventVersion(sessionId);
      const current = await repository.findEvents(sessionId, EventFilter.active());
      if (current.length < read.length || read.some((e, i) => current[i]!.id !== e.id)) return null;
      const appended = current.slice(read.length);
      const retained = [...result.compactedEvents, ...appended];
      const committed = await this.write(target, current, result.archivedEvents, retained, version);
      if (committed !== false) {
        logger.debug('compaction rebased over concurrent appends', { sessionId, appended: appended.length, attempt });
        return {
          result: new CompactionResult(retained, result.archivedEvents, result.tokensEstimatedSaved, undefined, result.usage),
          rebased: true,
          versionBefore: version,
          ...committed,
        };
      }
    }
    return null;
  }

  /**
   * compactEvents, recorded as a compaction unit in the same atomic step when the repository keeps records.
   * false: the CAS was lost (nothing written, nothing recorded).
   */
  private async write(
    target: CommitTarget,
    windowBefore: readonly SessionEvent[],
    archived: readonly SessionEvent[],
    retained: readonly SessionEvent[],
    version: number,
  ): Promise<false | { compactionId?: string }> {
    const { repository } = this.options;
    const { sessionId } = target;
    // Only a repository that keeps records is given one: any other is called with the four arguments.
    if (!isCompactionRecordRepository(repository)) {
      return (await repository.compactEvents(sessionId, archived, retained, version)) ? {} : false;
    }
    const record = buildCompactionRecord({
      id: randomUUID(),
      sessionId,
      createdAt: this.options.now(),
      strategy: target.strategy,
      ...(target.trigger !== undefined ? { trigger: target.trigger } : {}),
      versionBefore: version,
      windowBefore,
      archived,
      retained,
      range: target.range,
    });
    const committed = await repository.compactEvents(sessionId, archived, retained, version, record);
    return committed ? { compactionId: record.id } : false;
  }
}
