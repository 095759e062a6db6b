import { IllegalStateError, InvalidArgumentError } from '../errors.js';
import { EventFilter } from '../filter/EventFilter.js';
import {
  summarizeCompactionRecord,
  type CompactionRecord,
  type CompactionRecordSummary,
} from '../repository/CompactionRecord.js';
import { isCompactionRecordRepository, type CompactionRecordRepository } from '../repository/CompactionRecordRepository.js';
import type { SessionRepository } from '../repository/SessionRepository.js';
import { requireStorableText } from '../validation/inputs.js';
import type { CompactionLocks } from './compaction/CompactionLocks.js';
import { accessDenied } from './sessionAccess.js';
import { coveredIds, isRedacted, METADATA_TAINTED_BY, taintedBy } from '../compaction/coverage.js';
import { originalIdOf } from '../compaction/strategies/replaceInPlace.js';
import { SessionEvent } from '../session/SessionEvent.js';

/** Attempts before a revert gives up under constant concurrent writes (each attempt is cheap: no model call). */
const MAX_REVERT_ATTEMPTS = 10;

export interface CompactionAccessOptions {
  /** The caller's user (from server-side state): a session of another user is refused. */
  userId?: string;
}

/** Options of `listCompactions`. */
export interface ListCompactionsOptions extends CompactionAccessOptions {
  /**
   * false: each record as a CompactionRecordSummary, without its id arrays (the counts stay), slimmed in the
   * store — a listing of a long session's compactions then moves a few hundred bytes per record instead of
   * every archived id. Default true: the whole CompactionRecord (what a revert or an audit of ids needs).
   */
  eventIds?: boolean;
}

export interface RevertResult {
  compactionId: string;
  /** The active window after the revert, in log order. */
  events: readonly SessionEvent[];
  /** Events active again: those the compaction archived or removed. */
  restoredEventIds: readonly string[];
  /** Events the compaction had added (summaries, masked copies), now gone from the log. */
  removedEventIds: readonly string[];
  /** The log version the revert produced. */
  version: number;
}

export interface RevertContext {
  repository: SessionRepository;
  now: () => Date;
  /** The locks compact runs under: a revert and a compaction of one session never interleave, in any process. */
  locks: CompactionLocks;
  /**
   * Finishes a committed revert while the locks are still held (the service regenerates restored summaries
   * written from since-redacted content there, so no compaction elsewhere reads them in between); its result
   * is the revert's.
   */
  settle?: (sessionId: string, result: RevertResult) => Promise<RevertResult>;
}

/** listCompactions / revertCompaction of DefaultSessionService. */
export class CompactionReverter {
  constructor(private readonly context: RevertContext) {}

  async list(sessionId: string, options: ListCompactionsOptions = {}): Promise<CompactionRecord[] | CompactionRecordSummary[]> {
    const eventIds = options.eventIds ?? true;
    if (typeof eventIds !== 'boolean') throw new InvalidArgumentError('eventIds must be a boolean');
    const repository = this.context.repository;
    await this.requireSession(sessionId, options);
    if (!isCompactionRecordRepository(repository)) throw unsupported('listCompactions');
    if (eventIds) return repository.listCompactions(sessionId);
    // A repository written before summaries existed still answers, through the whole records.
    if (typeof repository.listCompactionSummaries === 'function') return repository.listCompactionSummaries(sessionId);
    return (await repository.listCompactions(sessionId)).map(summarizeCompactionRecord);
  }

  async revert(sessionId: string, compactionId: string, options: CompactionAccessOptions = {}): Promise<RevertResult> {
    requireStorableText(compactionId, 'compactionId');
    await this.requireSession(sessionId, options);
    const { repository } = this.context;
    if (!isCompactionRecordRepository(repository)) throw unsupported('revertCompaction');
    const revert = async (held: () => boolean): Promise<RevertResult> => {
      for (let attempt = 0; attempt < MAX_REVERT_ATTEMPTS; attempt++) {
        const outcome = await this.attempt(repository, sessionId, compactionId, held);
        if (outcome !== null) return this.context.settle === undefined ? outcome : this.context.settle(sessionId, outcome);
      }
      throw new IllegalStateError(
        `Could not revert compaction ${compactionId}: the session kept changing (${MAX_REVERT_ATTEMPTS} attempts)`,
      );
    };
    // A revert has no no-op result to return: when another holder keeps the lease past `waitMs`, it is
    // refused, having changed nothing.
    return this.context.locks.exclusive(sessionId, revert, async () => {
      throw new IllegalStateError(
        `Session ${sessionId} is being compacted by another holder of the compaction lock; the revert changed nothing, try again`,
      );
    });
  }

  /** One CAS attempt; null when it lost to a concurrent write (nothing was changed). */
  private async attempt(
    repository: SessionRepository & CompactionRecordRepository,
    sessionId: string,
    compactionId: string,
    held: () => boolean,
  ): Promise<RevertResult | null> {
    const records = await repository.listCompactions(sessionId);
    const record = revertible(records, compactionId);
    const version = await repository.getEventVersion(sessionId);
    const log = await repository.findEvents(sessionId, EventFilter.all());
    const active = log.filter((e) => !e.isArchived());
    const stands = record.windowAfter.every((id, i) => active[i]?.id === id);
    if (!stands) {
      throw new IllegalStateError(
        `Compaction ${compactionId} cannot be reverted: the active window no longer starts with the window it produced ` +
          '(changed by a compaction that was not recorded)',
      );
    }
    const appended = active.slice(record.windowAfter.length);
    const byId = new Map(log.map((e) => [e.id, e]));
    const removed = new Map(record.removedEvents.map((e) => [e.id, e]));
    const redacted = log.filter(isRedacted);
    const restored = record.windowBefore.map((id) => {
      const kept = byId.get(id);
      const event = kept ?? taintIfRedacted(removed.get(id), redacted);
      if (event === undefined) {
        throw new IllegalStateError(
          `Compaction ${compactionId} cannot be reverted: event ${id} is no longer in the log (removed by retention)`,
        );
      }
      return event;
    });
    const restoredIds = new Set(record.windowBefore);
    const clash = appended.find((e) => restoredIds.has(e.id));
    if (clash !== undefined) {
      throw new IllegalStateError(`Compaction ${compactionId} cannot be reverted: event ${clash.id} was appended again since`);
    }
    // Archived copies go back as they are: every repository stores a retained event as active.
    const window = [...restored, ...appended];
    const at = this.context.now();
    // A lease lost meanwhile (expired, taken by a compaction elsewhere) must not let the revert race that compaction.
    if (!held()) {
      throw new IllegalStateError(
        `Compaction ${compactionId} was not reverted: the compaction lease of session ${sessionId} was lost (nothing changed)`,
      );
    }
    if (!(await repository.revertCompactionEvents(sessionId, compactionId, window, version, at))) return null;
    const wasActive = new Set(record.windowAfter);
    return {
      compactionId,
      events: window.map((e) => (e.isArchived() ? e.with({ archived: false }) : e)),
      restoredEventIds: record.windowBefore.filter((id) => !wasActive.has(id)),
      removedEventIds: [...record.addedEventIds],
      version: version + 1,
    };
  }

  private async requireSession(sessionId: string, options: CompactionAccessOptions): Promise<void> {
    requireStorableText(sessionId, 'sessionId');
    const session = await this.context.repository.findById(sessionId);
    if (session === null) throw new InvalidArgumentError(`Session not found: ${sessionId}`);
    const userId = options?.userId;
    if (userId !== undefined && session.userId !== requireStorableText(userId, 'userId')) throw accessDenied(sessionId, userId);
  }
}

/**
 * Only the latest compaction that stands can be reverted: an older one's window was itself compacted since,
 * so restoring it would undo the later one silently. Reverting the latest one makes the previous one latest.
 */
function revertible(records: readonly CompactionRecord[], compactionId: string): CompactionRecord {
  const record = records.find((r) => r.id === compactionId);
  if (record === undefined) throw new InvalidArgumentError(`Compaction not found: ${compactionId}`);
  if (record.revertedAt !== null) {
    throw new IllegalStateError(`Compaction ${compactionId} was already reverted at ${record.revertedAt.toISOString()}`);
  }
  const later = records.find((r) => r.revertedAt === null && r.versionAfter > record.versionAfter);
  if (later !== undefined) {
    throw new IllegalStateError(
      `Compaction ${compactionId} cannot be reverted while the later compaction ${later.id} stands: revert ${later.id} first`,
    );
  }
  return record;
}

export function unsupported(operation: string): IllegalStateError {
  return new IllegalStateError(
    `${operation} is not supported by this repository (it is not a CompactionRecordRepository: listCompactions and revertCompactionEvents)`,
  );
}

/**
 * A superseded summary comes back from the record as it was written: if events it may have been written from
 * were redacted since, it is marked tainted the way the redactor marks summaries in the log, so the service
 * regenerates it before it reaches a model.
 */
function taintIfRedacted(summary: SessionEvent | undefined, redacted: readonly SessionEvent[]): SessionEvent | undefined {
  if (summary === undefined || redacted.length === 0) return summary;
  const isSummaryText =
    summary.isSynthetic() &&
    summary.messageType !== 'user' &&
    typeof summary.metadata[SessionEvent.METADATA_COMPACTION_SOURCE] === 'string';
  if (!isSummaryText) return summary;
  const covered = new Set(coveredIds(summary));
  const sources = redacted
    .filter((r) => covered.size === 0 || covered.has(r.id) || covered.has(originalIdOf(r)) || summary.timestamp >= r.timestamp)
    .map((r) => originalIdOf(r));
  if (sources.length === 0) return summary;
  return summary.with({
    metadata: { ...summary.metadata, [METADATA_TAINTED_BY]: [...new Set([...taintedBy(summary), ...sources])] },
  });
}
