import { randomUUID } from 'node:crypto';
import type { CompactionResult } from '../compaction/CompactionResult.js';
import type { CompactionStrategyLike } from '../compaction/CompactionStrategy.js';
import type { CompactionTriggerLike } from '../compaction/CompactionTrigger.js';
import { verifyCoverage, type CoverageReport } from '../compaction/coverage.js';
import { IllegalStateError, InvalidArgumentError } from '../errors.js';
import { EventFilter } from '../filter/EventFilter.js';
import { toEventFilter } from '../filter/toEventFilter.js';
import type { CompactionLock, CompactionLockSettings } from '../lock/CompactionLock.js';
import { defaultLogger, type Logger } from '../logging.js';
import type { CompactionRecord, CompactionRecordSummary } from '../repository/CompactionRecord.js';
import type { EventLogState } from '../repository/EventLogStateRepository.js';
import { instrumentRepository } from '../repository/instrumentRepository.js';
import { readEventLogState } from '../repository/readEventLogState.js';
import type { SessionRepository } from '../repository/SessionRepository.js';
import { updateStoredMetadata } from '../repository/updateStoredMetadata.js';
import { validateCreateSessionRequest, type CreateSessionRequest } from '../session/CreateSessionRequest.js';
import type { Message } from '../session/Message.js';
import { DEFAULT_TIME_TO_LIVE_MS, Session } from '../session/Session.js';
import { SessionEvent } from '../session/SessionEvent.js';
import type { ChatClient } from '../summarization/ChatClient.js';
import { defaultTokenCountEstimator } from '../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import {
  invalid,
  requireDate,
  requireInteger,
  requireJsonObject,
  requireOffsetDate,
  requireStorableText,
} from '../validation/inputs.js';
import type { CompactionHooks } from './CompactionHooks.js';
import {
  CompactionReverter,
  type CompactionAccessOptions,
  type ListCompactionsOptions,
  type RevertResult,
} from './CompactionReverter.js';
import { compactionStatsHooks } from './compactionStats.js';
import { CompactionHookList } from './compaction/CompactionHookList.js';
import { CompactionLocks } from './compaction/CompactionLocks.js';
import { CompactionPreviewer } from './compaction/CompactionPreviewer.js';
import { CompactionRunner } from './compaction/CompactionRunner.js';
import type { DataLifecycleContext } from './lifecycle/DataLifecycleContext.js';
import { EventRedactor } from './lifecycle/EventRedactor.js';
import { reclaimStorage } from './lifecycle/reclaimStorage.js';
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
import { RetentionRunner } from './lifecycle/RetentionRunner.js';
import { SessionEraser } from './lifecycle/SessionEraser.js';
import { setPinned, withDefaultPin } from './pinning.js';
import { SessionForker, type ForkSessionOptions } from './SessionForker.js';
import type {
  AppendMessageOptions,
  CompactOptions,
  CompactionPreview,
  PreviewOptions,
  SessionService,
} from './SessionService.js';
import { SessionServiceEvents, type SessionServiceEventMap, type SessionServiceEventName } from './SessionServiceEvents.js';

/** How long a deleted session's id stays blocked by default: 30 days. */
export const DEFAULT_TOMBSTONE_TTL_MS = 30 * 24 * 60 * 60 * 1000;

export interface DefaultSessionServiceOptions {
  /** Time to live of new sessions unless the request says otherwise; default 60 days. */
  defaultTimeToLiveMs?: number;
  logger?: Logger;
  /** Clock, for tests and replays. */
  now?: () => Date;
  /** Counts tokens for previews; default the shared js-tiktoken estimator. */
  tokenCountEstimator?: TokenCountEstimator;
  /**
   * What to do when the CAS write loses. 'skip' (default, the Java behaviour and API.md's protocol): every lost
   * CAS is the no-op result. 'rebase': if the loss was caused only by appends (the window read is still an
   * unchanged prefix), the same result is committed again with the new events appended to the retained window —
   * the summary is not thrown away and the strategy is not run again; a loss to anything else (another
   * compaction) is the no-op result. Either way the version is checked right before the strategy runs, so a
   * hot session's compaction works on a fresh window (docs/benchmarks/hot-session.md).
   */
  conflictPolicy?: 'skip' | 'rebase';
  /** Rebase attempts before giving up as a no-op; default 5. */
  maxRebaseAttempts?: number;
  /**
   * Serialise compactions of one session within this process (default true), so that concurrent requests
   * never start two summarisations. CAS remains the guard across processes.
   */
  lockCompactions?: boolean;
  /**
   * A lock shared by every process compacting the same sessions (PostgresCompactionLock, RedisCompactionLock,
   * SqliteCompactionLock), so that at most one summarisation of a session runs at a time across instances.
   * With `waitMs` 0 (default) a compaction finding the lease held returns at once a no-op result whose
   * `skipReason` is 'lock-held'; otherwise it waits up to `waitMs`. The lease (`leaseMs`, default 30 s) is
   * renewed while the strategy runs; a compaction whose lease was lost does not commit ('lock-lost').
   * The lock is taken only when the trigger fires. See docs/compaction-lock.md.
   */
  compactionLock?: CompactionLock | CompactionLockSettings;
  /** Pin every system message appended through the service (unless its metadata says `pinned: false`). */
  pinSystemMessages?: boolean;
  /** `beforeCompaction` (veto, extra summary instructions) and `afterCompaction` hooks; see CompactionHooks. */
  hooks?: CompactionHooks | readonly CompactionHooks[];
  /**
   * Keep `session.metadata.compactionStats` (compaction count, events archived, tokens saved) current after
   * every committed compaction; default false (it costs a metadata read and write per compaction). Stats
   * hooks of your own (`compactionStatsHooks`) replace these.
   */
  recordCompactionStats?: boolean;
  /**
   * How long the id of a deleted session stays blocked (a tombstone refuses `create` with that id, and a late
   * append or compaction gets "Session not found: <id> (deleted …)"); default 30 days. `Infinity`: forever;
   * 0: no tombstones, a deleted id can be created again at once.
   */
  tombstoneTtlMs?: number;
  /**
   * Writes regenerated summaries after a redaction (purgeDerived, or a compaction whose strategy has no
   * chat client of its own). Default: a mechanical summary without a model.
   */
  summaryRegenerationClient?: ChatClient;
}

/**
 * The SessionService over any SessionRepository: sessions and their logs itself, and a facade over the units
 * that do the rest — compaction (CompactionRunner, CompactionPreviewer), revert (CompactionReverter), fork
 * (SessionForker), and the data lifecycle (SessionEraser, EventRedactor, RetentionRunner).
 */
export class DefaultSessionService implements SessionService {
  readonly defaultTimeToLiveMs: number;
  /** Compaction progress (started, completed, skipped, failed, reverted) and data changes (erased, rewritten, purged). */
  readonly events = new SessionServiceEvents();
  protected readonly logger: Logger;
  protected readonly now: () => Date;
  private readonly pinSystemMessages: boolean;
  private readonly locks: CompactionLocks;
  private readonly hooks: CompactionHookList;
  private readonly eraser: SessionEraser;
  private readonly redactor: EventRedactor;
  private readonly retention: RetentionRunner;
  private readonly runner: CompactionRunner;
  private readonly previewer: CompactionPreviewer;
  private readonly reverter: CompactionReverter;
  private readonly forker: SessionForker;

  constructor(
    protected readonly repository: SessionRepository,
    options: DefaultSessionServiceOptions = {},
  ) {
    if (repository === null || repository === undefined) throw new InvalidArgumentError('repository must not be null');
    const opts = options ?? {};
    const ttl = opts.defaultTimeToLiveMs ?? DEFAULT_TIME_TO_LIVE_MS;
    if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl <= 0) {
      throw new InvalidArgumentError(`defaultTimeToLiveMs must be greater than 0 (got ${String(ttl)})`);
    }
    if (opts.now !== undefined && typeof opts.now !== 'function') throw invalid('now', 'a function', opts.now);
    if (opts.conflictPolicy !== undefined && opts.conflictPolicy !== 'skip' && opts.conflictPolicy !== 'rebase') {
      throw new InvalidArgumentError("conflictPolicy must be 'skip' or 'rebase'");
    }
    this.defaultTimeToLiveMs = ttl;
    this.logger = opts.logger ?? defaultLogger();
    this.now = opts.now ?? (() => new Date());
    const estimator = opts.tokenCountEstimator ?? defaultTokenCountEstimator();
    const maxRebaseAttempts =
      opts.maxRebaseAttempts === undefined ? 5 : requireInteger(opts.maxRebaseAttempts, 'maxRebaseAttempts', 0, 1000);
    this.locks = new CompactionLocks(opts.lockCompactions !== false, opts.compactionLock, this.logger);
    this.pinSystemMessages = opts.pinSystemMessages === true;
    this.hooks = new CompactionHookList(
      opts.hooks,
      opts.recordCompactionStats === true ? () => compactionStatsHooks(this, this.now) : undefined,
      this.logger,
    );
    // Every repository call gets a span and a latency measurement (no-ops without an OpenTelemetry SDK).
    this.repository = instrumentRepository(repository);
    const tombstoneTtlMs = opts.tombstoneTtlMs ?? DEFAULT_TOMBSTONE_TTL_MS;
    if (typeof tombstoneTtlMs !== 'number' || Number.isNaN(tombstoneTtlMs) || tombstoneTtlMs < 0)
      throw new InvalidArgumentError('tombstoneTtlMs must be a number >= 0');
    const dataLifecycle: DataLifecycleContext = {
      repository: this.repository,
      emit: (name, payload) => this.emit(name, payload),
      logger: this.logger,
      now: this.now,
    };
    this.eraser = new SessionEraser(dataLifecycle, tombstoneTtlMs);
    this.redactor = new EventRedactor(dataLifecycle, opts.summaryRegenerationClient);
    this.retention = new RetentionRunner(dataLifecycle, this.eraser);
    this.runner = new CompactionRunner({
      repository: this.repository,
      logger: this.logger,
      now: this.now,
      estimator,
      conflictPolicy: opts.conflictPolicy ?? 'skip',
      maxRebaseAttempts,
      locks: this.locks,
      hooks: this.hooks,
      redactor: this.redactor,
      explain: (error, sessionId) => this.eraser.explain(error, sessionId),
      emit: (name, payload) => this.emit(name, payload),
    });
    this.previewer = new CompactionPreviewer({ repository: this.repository, now: this.now, estimator });
    this.reverter = new CompactionReverter({
      repository: this.repository,
      now: this.now,
      locks: this.locks,
      settle: (sessionId, result) => this.regenerateRestoredSummaries(sessionId, result),
    });
    this.forker = new SessionForker({
      repository: this.repository,
      now: this.now,
      defaultTimeToLiveMs: this.defaultTimeToLiveMs,
      logger: this.logger,
    });
  }

  async create(request: CreateSessionRequest): Promise<Session> {
    const checked = validateCreateSessionRequest(request);
    const now = requireDate(this.now(), 'now()');
    const chosenId = checked.id !== undefined;
    const id = checked.id ?? randomUUID();
    const session = Session.create({
      id,
      userId: checked.userId,
      createdAt: now,
      expiresAt: requireOffsetDate(now, checked.timeToLiveMs ?? this.defaultTimeToLiveMs, 'timeToLiveMs'),
      metadata: checked.metadata ?? {},
    });
    if (!chosenId) return this.repository.save(session);
    // A caller-chosen id must not overwrite (and so take over) someone else's session, nor bring back a deleted one.
    const inserted = await this.eraser.insertChosenId(session, checked.allowRecreate === true);
    if (!inserted) throw new IllegalStateError(`Session already exists: ${id}`);
    return session;
  }

  async findById(id: string): Promise<Session | null> {
    return this.repository.findById(requireStorableText(id, 'sessionId'));
  }

  async findByUserId(userId: string): Promise<Session[]> {
    return this.repository.findByUserId(requireStorableText(userId, 'userId'));
  }

  /**
   * Read-modify-write of a session's metadata (the token calibration, usage totals, compaction stats).
   * Atomic when the repository is a MetadataUpdatingRepository (every built-in repository is): concurrent
   * updates of one session, from this and other processes, all land. `update` may then run more than once, so
   * keep it pure. Any other repository gets a plain read then save, where a concurrent update may be
   * overwritten.
   */
  async updateMetadata(
    sessionId: string,
    update: (metadata: Readonly<Record<string, unknown>>) => Record<string, unknown>,
  ): Promise<Session> {
    const id = requireStorableText(sessionId, 'sessionId');
    if (typeof update !== 'function') throw new InvalidArgumentError('update must be a function');
    const updated = await updateStoredMetadata(this.repository, id, update);
    if (updated === null) throw new InvalidArgumentError(`Session not found: ${sessionId}`);
    return updated;
  }

  async delete(id: string): Promise<ErasureReport> {
    return this.reclaiming(this.eraser.eraseSession(requireStorableText(id, 'sessionId'), 'delete'));
  }

  async eraseUser(userId: string): Promise<ErasureReport> {
    return this.reclaiming(this.eraser.eraseUser(requireStorableText(userId, 'userId')));
  }

  async redactEvent(sessionId: string, eventId: string, options: RedactOptions): Promise<RedactionReport> {
    return this.reclaiming(this.redactor.redact(sessionId, eventId, options));
  }

  async purgeDerived(sessionId: string, eventId?: string, options: PurgeDerivedOptions = {}): Promise<PurgeDerivedReport> {
    if (eventId !== undefined) requireStorableText(eventId, 'eventId');
    return this.reclaiming(this.redactor.regenerate(sessionId, eventId, options ?? {}));
  }

  async applyRetention(policy: RetentionPolicy, options: RetentionOptions = {}): Promise<RetentionReport> {
    return this.reclaiming(this.retention.apply(policy, options));
  }

  /** Also removes tombstones that have expired. */
  async deleteExpiredSessions(before: Date): Promise<number> {
    return this.eraser.eraseExpired(requireDate(before, 'before'));
  }

  /** Once an erasure, redaction or retention pass is done, lets the store make the removed bytes unrecoverable. */
  private async reclaiming<T>(operation: Promise<T>): Promise<T> {
    const result = await operation;
    await reclaimStorage(this.repository);
    return result;
  }

  async appendEvent(event: SessionEvent): Promise<void> {
    if (!(event instanceof SessionEvent)) throw new InvalidArgumentError('event must not be null');
    await this.appendToLog(withDefaultPin(event, this.pinSystemMessages));
  }

  async appendMessage(sessionId: string, message: Message, options: AppendMessageOptions = {}): Promise<SessionEvent> {
    options ??= {};
    if (typeof options !== 'object') throw invalid('options', 'an object', options);
    const metadata = { ...requireJsonObject(options.metadata, 'metadata') };
    if (options.pinned !== undefined) metadata[SessionEvent.METADATA_PINNED] = options.pinned === true;
    const event = withDefaultPin(
      SessionEvent.create({
        sessionId: requireStorableText(sessionId, 'sessionId'),
        message,
        ...(options.id !== undefined ? { id: options.id } : {}),
        timestamp: options.timestamp ?? this.now(),
        metadata,
        branch: options.branch ?? null,
      }),
      this.pinSystemMessages,
    );
    await this.appendToLog(event);
    return event;
  }

  async pinEvent(sessionId: string, eventId: string): Promise<SessionEvent> {
    return setPinned(this.repository, sessionId, eventId, true);
  }

  async unpinEvent(sessionId: string, eventId: string): Promise<SessionEvent> {
    return setPinned(this.repository, sessionId, eventId, false);
  }

  /** A late append to a deleted session is refused with an error that says so. */
  private async appendToLog(event: SessionEvent): Promise<void> {
    await this.repository.appendEvent(event).catch(async (error: unknown) => {
      throw await this.eraser.explain(error, event.sessionId);
    });
  }

  async getEvents(sessionId: string, filter: EventFilter = EventFilter.all()): Promise<SessionEvent[]> {
    return this.repository.findEvents(requireStorableText(sessionId, 'sessionId'), toEventFilter(filter));
  }

  async getMessages(sessionId: string): Promise<Message[]> {
    return (await this.getEvents(sessionId)).map((e) => e.message);
  }

  async getEventVersion(sessionId: string): Promise<number> {
    return this.repository.getEventVersion(requireStorableText(sessionId, 'sessionId'));
  }

  async getEventLogState(sessionId: string): Promise<EventLogState> {
    return readEventLogState(this.repository, requireStorableText(sessionId, 'sessionId'));
  }

  /**
   * The only compaction entry point (see CompactionRunner for the protocol): the version is read before the
   * active window, the trigger decides, the strategy's result is committed with compare-and-set; a lost CAS
   * is a no-op result, never an exception. With `options.knownWindow` a trigger that does not fire costs no
   * read; with `options.range` the strategy sees only that part of the window. A committed compaction is
   * recorded (see `listCompactions`) when the repository keeps records.
   */
  async compact(
    sessionId: string,
    trigger: CompactionTriggerLike,
    strategy: CompactionStrategyLike,
    options: CompactOptions = {},
  ): Promise<CompactionResult> {
    return this.runner.compact(sessionId, trigger, strategy, options);
  }

  /**
   * Sets (or with null removes) the cross-process compaction lock after construction, for wrappers such as
   * SessionMemory that receive a ready service; same settings as the `compactionLock` option.
   */
  setCompactionLock(lock: CompactionLock | CompactionLockSettings | null): void {
    this.locks.setLease(lock);
  }

  /**
   * Registers compaction hooks (see `CompactionHooks`); returns a function that removes them. Hooks run in
   * registration order, after those given to the constructor.
   */
  addCompactionHooks(hooks: CompactionHooks): () => void {
    return this.hooks.add(hooks);
  }

  /** What compact would do, without writing; summarising strategies skip the model unless `callModel`. */
  async previewCompaction(
    sessionId: string,
    trigger: CompactionTriggerLike,
    strategy: CompactionStrategyLike,
    options: PreviewOptions = {},
  ): Promise<CompactionPreview> {
    return this.previewer.preview(sessionId, trigger, strategy, options);
  }

  /**
   * The session's committed compactions, newest first (reverted ones included, with `revertedAt`). With
   * `{ eventIds: false }` each as a CompactionRecordSummary: no id arrays, their counts, slimmed in the store.
   */
  async listCompactions(
    sessionId: string,
    options: ListCompactionsOptions & { eventIds: false },
  ): Promise<CompactionRecordSummary[]>;
  async listCompactions(sessionId: string, options?: ListCompactionsOptions & { eventIds?: true }): Promise<CompactionRecord[]>;
  async listCompactions(
    sessionId: string,
    options?: ListCompactionsOptions,
  ): Promise<CompactionRecord[] | CompactionRecordSummary[]>;
  async listCompactions(
    sessionId: string,
    options: ListCompactionsOptions = {},
  ): Promise<CompactionRecord[] | CompactionRecordSummary[]> {
    return this.reverter.list(sessionId, options ?? {});
  }

  /**
   * Restores the active window as it was before compaction `compactionId`: the events it archived are active
   * again in their places, the summaries it added are removed and the summaries it superseded restored;
   * events appended since stay after the restored window, in their order. CAS-protected (retried while only
   * appends interfere; never half-applied). Only the latest compaction that stands can be reverted
   * (IllegalStateError naming the later one otherwise); its record is kept, marked reverted. Runs under the
   * same locks as compact — the in-process one and the configured `compactionLock` lease (waiting up to its
   * `waitMs`; IllegalStateError, nothing changed, when another holder keeps it); a restored summary written
   * from since-redacted content is regenerated before they are released.
   */
  async revertCompaction(sessionId: string, compactionId: string, options: CompactionAccessOptions = {}): Promise<RevertResult> {
    const result = await this.reverter.revert(sessionId, compactionId, options ?? {}).catch(async (error: unknown) => {
      throw await this.eraser.explain(error, sessionId);
    });
    this.emit('compactionReverted', { sessionId, compactionId, restoredEventIds: result.restoredEventIds });
    return result;
  }

  /**
   * A restored summary written from since-redacted content is rewritten before any model can read it: under
   * the revert's locks, so a compaction in another process cannot summarise it in between.
   */
  private async regenerateRestoredSummaries(sessionId: string, result: RevertResult): Promise<RevertResult> {
    if (!this.redactor.hasTainted(result.events)) return result;
    await this.reclaiming(this.redactor.regenerate(sessionId, undefined));
    const events = await this.repository.findEvents(sessionId, EventFilter.active());
    return { ...result, events, version: await this.repository.getEventVersion(sessionId) };
  }

  /**
   * A new session (same owner, new id) holding a copy of the log up to and including `atEventId` (default:
   * all of it): archived flags, summaries, pins and event metadata as they are; the session metadata plus
   * `forkedFrom` (see ForkOrigin). Compaction records are not copied. The source is not changed.
   */
  async forkSession(sessionId: string, options: ForkSessionOptions = {}): Promise<Session> {
    return this.forker.fork(sessionId, options ?? {});
  }

  /** Proves the coverage ledger over the whole log (see compaction/coverage.ts). */
  async verifyCoverage(sessionId: string): Promise<CoverageReport> {
    return verifyCoverage(await this.getEvents(sessionId, EventFilter.all()));
  }

  private emit<K extends SessionServiceEventName>(name: K, payload: SessionServiceEventMap[K]): void {
    for (const error of this.events.emit(name, payload)) {
      this.logger.warn('a compaction event listener threw', { event: name, error: String(error) });
    }
  }
}
