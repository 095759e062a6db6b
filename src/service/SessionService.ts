import type { CompactionResult } from '../compaction/CompactionResult.js';
import type { CompactionStageReport, CompactionStrategyLike } from '../compaction/CompactionStrategy.js';
import type { CompactionTriggerLike } from '../compaction/CompactionTrigger.js';
import type { CoverageReport } from '../compaction/coverage.js';
import type { EventFilter } from '../filter/EventFilter.js';
import type { CreateSessionRequest } from '../session/CreateSessionRequest.js';
import type { Message } from '../session/Message.js';
import type { Session } from '../session/Session.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import type {
  ErasureReport,
  PurgeDerivedOptions,
  PurgeDerivedReport,
  RedactionReport,
  RedactOptions,
  RetentionOptions,
  RetentionPolicy,
  RetentionReport,
} from './lifecycle/reports.js';
import type { SessionServiceEvents } from './SessionServiceEvents.js';
import type { CompactionRange } from '../compaction/CompactionRange.js';
import type { CompactionRecord, CompactionRecordRange, CompactionRecordSummary } from '../repository/CompactionRecord.js';
import type { EventLogState } from '../repository/SessionRepository.js';
import type { CompactionAccessOptions, ListCompactionsOptions, RevertResult } from './CompactionReverter.js';
import type { ForkSessionOptions } from './SessionForker.js';

export interface AppendMessageOptions {
  branch?: string | null;
  metadata?: Record<string, unknown>;
  id?: string;
  timestamp?: Date;
  /** Pin the event: no compaction archives, masks or summarises it away (`metadata.pinned = true`). */
  pinned?: boolean;
}

/** A window the caller already holds, so that a compaction whose trigger does not fire reads nothing. */
export interface KnownWindow {
  /** The session as just read or written (its metadata, e.g. the token calibration, is what the trigger sees). */
  session: Session;
  /** The whole active window (EventFilter.active(), unfiltered), in log order. */
  events: readonly SessionEvent[];
}

export interface CompactOptions {
  /**
   * Compact only this part of the active window: the strategy sees only the range's events (widened to turn
   * or tool-pair boundaries) and the rest of the window stays as it is. The trigger still sees the whole window.
   */
  range?: CompactionRange;
  /**
   * The trigger is first asked about this window; when it does not fire, compact returns the no-op without
   * a storage round trip. When it fires, the protocol runs from its first read (the trigger is asked again
   * about the stored window), so a stale window never reaches a strategy or a commit.
   */
  knownWindow?: KnownWindow;
}

export interface PreviewOptions {
  /** Let summarising strategies call their model (default false: report the range they would summarise). */
  callModel?: boolean;
  /** Preview a compaction limited to this range, as `compact(…, { range })` would run it. */
  range?: CompactionRange;
}

export interface CompactionPreview {
  triggered: boolean;
  result: CompactionResult;
  eventsBefore: number;
  eventsAfter: number;
  tokensBefore: number;
  tokensAfter: number;
  /** false when the strategy previewed itself; undefined when it has no preview hook and compact ran. */
  modelCalled: boolean | undefined;
  summarizedEvents?: readonly SessionEvent[];
  /** For a staged strategy (pipeline, pressure bands): each stage that ran, with tokens before and after. */
  stages?: readonly CompactionStageReport[];
  /**
   * Only with `options.range`: the range as resolved against the window read (widened to its `snap`
   * boundaries), the first and last event the strategy was given; null when a time range selected no event.
   */
  range?: CompactionRecordRange | null;
}

export interface SessionService {
  /** Default time to live: 60 days. */
  create(request: CreateSessionRequest): Promise<Session>;
  findById(id: string): Promise<Session | null>;
  findByUserId(userId: string): Promise<Session[]>;
  /**
   * Deletes the session, its whole log (active and archived events, summaries, masked copies) and what is
   * derived from it, and leaves a tombstone so that the id cannot be created again; reports what went.
   */
  delete(id: string): Promise<ErasureReport>;
  /** `delete` for every session of the user. */
  eraseUser(userId: string): Promise<ErasureReport>;
  /**
   * Replaces the content of one event (active or archived) and of its masked copies with a marker, in place:
   * same id, position and shape. Summaries that may hold the content are marked tainted.
   */
  redactEvent(sessionId: string, eventId: string, options: RedactOptions): Promise<RedactionReport>;
  /** Regenerates the tainted summaries now (those tainted by `eventId` when given) instead of at the next compaction. */
  purgeDerived(sessionId: string, eventId?: string, options?: PurgeDerivedOptions): Promise<PurgeDerivedReport>;
  /** Removes old archived events and idle sessions in bounded batches; safe to run while traffic goes on. */
  applyRetention(policy: RetentionPolicy, options?: RetentionOptions): Promise<RetentionReport>;
  /** Deletes sessions that expired before `before`; returns how many. Nothing schedules it: the caller does. */
  deleteExpiredSessions(before: Date): Promise<number>;
  appendEvent(event: SessionEvent): Promise<void>;
  appendMessage(sessionId: string, message: Message, options?: AppendMessageOptions): Promise<SessionEvent>;
  /** Default filter: EventFilter.all() — archived events included. Use EventFilter.active() for prompts. */
  getEvents(sessionId: string, filter?: EventFilter): Promise<SessionEvent[]>;
  /** Every message of the log, archived included. */
  getMessages(sessionId: string): Promise<Message[]>;
  /**
   * The log's CAS version (0 for a missing session): it changes with every append and compaction, so a
   * reader can tell cheaply whether anything it derived from the log (a search index) is stale. Optional
   * for custom services; without it such readers re-read the log on every request.
   */
  getEventVersion?(sessionId: string): Promise<number>;
  /**
   * The version and the purge generation, read together: an archive purge (retention, in any process)
   * moves the generation but not the version, so a reader comparing both sees it. `purgeGeneration` is null
   * when the repository cannot report it. Optional for custom services; readers fall back to
   * `getEventVersion`.
   */
  getEventLogState?(sessionId: string): Promise<EventLogState>;
  /**
   * Pins an active event (CAS-protected; concurrent appends and compactions are kept): no strategy archives,
   * masks or summarises it away. Archived and synthetic events cannot be pinned (IllegalStateError).
   */
  pinEvent?(sessionId: string, eventId: string): Promise<SessionEvent>;
  /** Clears a pin set at append time or by `pinEvent`. */
  unpinEvent?(sessionId: string, eventId: string): Promise<SessionEvent>;
  /**
   * The only compaction entry point; see DefaultSessionService for the protocol. `options.range` limits what the
   * strategy sees; `options.knownWindow` spares the reads when the trigger does not fire (a service may ignore
   * it and read).
   */
  compact(
    sessionId: string,
    trigger: CompactionTriggerLike,
    strategy: CompactionStrategyLike,
    options?: CompactOptions,
  ): Promise<CompactionResult>;
  /**
   * The session's committed compactions, newest first (reverted ones included, marked); with
   * `{ eventIds: false }` as summaries without their id arrays. Optional for custom services; needs a
   * repository with compaction records.
   */
  listCompactions?(sessionId: string, options: ListCompactionsOptions & { eventIds: false }): Promise<CompactionRecordSummary[]>;
  listCompactions?(sessionId: string, options?: ListCompactionsOptions & { eventIds?: true }): Promise<CompactionRecord[]>;
  listCompactions?(sessionId: string, options?: ListCompactionsOptions): Promise<CompactionRecord[] | CompactionRecordSummary[]>;
  /**
   * Restores the active window as it was before compaction `compactionId` (CAS-protected; events appended
   * since stay after it). Only the latest compaction that stands can be reverted.
   */
  revertCompaction?(sessionId: string, compactionId: string, options?: CompactionAccessOptions): Promise<RevertResult>;
  /** Copies the log (up to `atEventId`) into a new session of the same owner; the source is untouched. */
  forkSession?(sessionId: string, options?: ForkSessionOptions): Promise<Session>;
  /** What compact would do, without writing; summarising strategies skip the model unless `callModel`. */
  previewCompaction(
    sessionId: string,
    trigger: CompactionTriggerLike,
    strategy: CompactionStrategyLike,
    options?: PreviewOptions,
  ): Promise<CompactionPreview>;
  /** Proves the coverage ledger over the whole log: every archived event is covered by exactly one summary or kept. */
  verifyCoverage(sessionId: string): Promise<CoverageReport>;
  /**
   * Read-modify-write of a session's metadata (advisory values such as the token calibration and usage
   * totals). DefaultSessionService makes it atomic when its repository has `updateSessionMetadata` (every
   * built-in one does); `update` may then run more than once, so it must be pure. A throw from `update`
   * changes nothing. "Session not found: <id>" when missing.
   */
  updateMetadata(
    sessionId: string,
    update: (metadata: Readonly<Record<string, unknown>>) => Record<string, unknown>,
  ): Promise<Session>;
  /**
   * Compaction progress (started, completed, skipped, failed, reverted), for a UI and for metrics, and data
   * changes (erased, rewritten, purged), for whoever keeps data derived from the log.
   */
  readonly events: SessionServiceEvents;
}
