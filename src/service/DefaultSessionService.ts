import { randomUUID } from 'node:crypto';
import { CompactionRequest } from '../compaction/CompactionRequest.js';
import { CompactionResult } from '../compaction/CompactionResult.js';
import { toCompactionStrategy, type CompactionStrategyLike, type StrategyPreview } from '../compaction/CompactionStrategy.js';
import { toCompactionTrigger, type CompactionTriggerLike } from '../compaction/CompactionTrigger.js';
import { verifyCoverage, type CoverageReport } from '../compaction/coverage.js';
import { IllegalStateError, InvalidArgumentError } from '../errors.js';
import { toEventFilter } from '../filter/toEventFilter.js';
import {
  invalid,
  requireDate,
  requireInteger,
  requireJsonObject,
  requireOffsetDate,
  requireStorableText,
} from '../validation/inputs.js';
import { EventFilter } from '../filter/EventFilter.js';
import { defaultLogger, type Logger } from '../logging.js';
import type { EventLogState, SessionRepository } from '../repository/SessionRepository.js';
import { updateStoredMetadata } from '../repository/updateStoredMetadata.js';
import { readEventLogState } from '../repository/readEventLogState.js';
import { estimateEventsTokens } from '../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import { validateCreateSessionRequest, type CreateSessionRequest } from '../session/CreateSessionRequest.js';
import { KeyedMutex } from './KeyedMutex.js';
import type { CompactionLock, CompactionLockSettings } from '../lock/CompactionLock.js';
import { resolveLockSettings, withCompactionLease, type ResolvedLockSettings } from '../lock/compactionLease.js';
import { maskedOriginals } from './maskedOriginals.js';
import { pinnedEventsLost, setPinned, withDefaultPin } from './pinning.js';
import { requireHooks, runAfterHooks, runBeforeHooks, type CompactionHooks } from './CompactionHooks.js';
import { compactionStatsHooks, isCompactionStatsHooks } from './compactionStats.js';
import { strategyName, traceCompaction, type CompactionTelemetry } from '../telemetry/CompactionTelemetry.js';
import { instrumentRepository } from '../repository/instrumentRepository.js';
import type { Message } from '../session/Message.js';
import { DEFAULT_TIME_TO_LIVE_MS, Session } from '../session/Session.js';
import { SessionEvent } from '../session/SessionEvent.js';
import type {
  AppendMessageOptions,
  CompactOptions,
  CompactionPreview,
  KnownWindow,
  PreviewOptions,
  SessionService,
} from './SessionService.js';
import {
  placeInWindow,
  rangeBounds,
  requireCompactionRange,
  resolveCompactionRange,
  type CompactionRange,
} from '../compaction/CompactionRange.js';
import type { CompactionRecord, CompactionRecordRange } from '../repository/CompactionRecord.js';
import { buildCompactionRecord } from './compactionRecords.js';
import { CompactionReverter, type CompactionAccessOptions, type RevertResult } from './CompactionReverter.js';
import { SessionForker, type ForkSessionOptions } from './SessionForker.js';
import type { ChatClient } from '../summarization/ChatClient.js';
import { EventRedactor } from './lifecycle/EventRedactor.js';
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
import { SessionEraser, type LifecycleContext } from './lifecycle/SessionEraser.js';

import { SessionServiceEvents, type SessionServiceEventMap, type SessionServiceEventName } from './SessionServiceEvents.js';

/** How long a deleted session's id stays blocked by default: 30 days. */
export const DEFAULT_TOMBSTONE_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** The `range` field of a `compactionCompleted` payload: present only for a compaction limited to a range. */
function rangeOf(range: CompactionRecordRange | null): { range?: CompactionRecordRange } {
  return range === null ? {} : { range };
}

function requireKnownWindow(known: KnownWindow, sessionId: string): void {
  if (known === null || typeof known !== 'object') throw invalid('knownWindow', 'an object', known);
  if (known.session === null || typeof known.session !== 'object' || known.session.id !== sessionId) {
    throw new InvalidArgumentError('knownWindow.session must be the Session being compacted');
  }
  if (!Array.isArray(known.events) || !known.events.every((e) => e instanceof SessionEvent && e.sessionId === sessionId)) {
    throw new InvalidArgumentError("knownWindow.events must be the session's SessionEvents");
  }
}

export interface DefaultSessionServiceOptions {
  /** Time to live of new sessions unless the request says otherwise; default 60 days. */
  defaultTimeToLiveMs?: number;
  logger?: Logger;
  /** Clock, for tests and replays. */
  now?: () => Date;
  /** Counts tokens for previews; default the shared js-tiktoken estimator. */
  tokenCountEstimator?: TokenCountEstimator;
  /**
   * What to do when the CAS write loses. 'skip' (default, the Java behaviour): return a no-op result.
   * 'rebase': if the loss was caused only by appends (the window read is still an unchanged prefix), commit
   * the same result with the new events appended to the retained window — the summary is not thrown away.
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

/** What compact() knows about the run beyond the strategy function: its name (for the record) and the range. */
interface CompactionContext {
  strategy: string;
  range: CompactionRange | undefined;
}

type CommitCompaction = (
  windowBefore: readonly SessionEvent[],
  archived: readonly SessionEvent[],
  retained: readonly SessionEvent[],
  version: number,
) => Promise<false | { compactionId?: string }>;

export class DefaultSessionService implements SessionService {
  readonly defaultTimeToLiveMs: number;
  /** Compaction lifecycle events: compactionStarted, compactionCompleted, compactionSkipped, compactionFailed. */
  readonly events = new SessionServiceEvents();
  protected readonly logger: Logger;
  protected readonly now: () => Date;
  private readonly estimator: TokenCountEstimator;
  private readonly conflictPolicy: 'skip' | 'rebase';
  private readonly maxRebaseAttempts: number;
  private readonly lock: KeyedMutex | null;
  private compactionLock: ResolvedLockSettings | null;
  private readonly pinSystemMessages: boolean;
  private readonly hooks: CompactionHooks[];
  private defaultStatsHooks: CompactionHooks | undefined;
  private readonly eraser: SessionEraser;
  private readonly redactor: EventRedactor;
  private readonly retention: RetentionRunner;
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
    this.estimator = opts.tokenCountEstimator ?? defaultTokenCountEstimator();
    this.conflictPolicy = opts.conflictPolicy ?? 'skip';
    this.maxRebaseAttempts =
      opts.maxRebaseAttempts === undefined ? 5 : requireInteger(opts.maxRebaseAttempts, 'maxRebaseAttempts', 0, 1000);
    this.lock = opts.lockCompactions === false ? null : new KeyedMutex();
    this.compactionLock = resolveLockSettings(opts.compactionLock);
    this.pinSystemMessages = opts.pinSystemMessages === true;
    const hooks = opts.hooks === undefined ? [] : Array.isArray(opts.hooks) ? opts.hooks : [opts.hooks as CompactionHooks];
    this.hooks = hooks.map(requireHooks);
    if (opts.recordCompactionStats === true && !this.hooks.some(isCompactionStatsHooks)) {
      this.defaultStatsHooks = compactionStatsHooks(this, this.now);
      this.hooks.unshift(this.defaultStatsHooks);
    }
    // Every repository call gets a span and a latency measurement (no-ops without an OpenTelemetry SDK).
    this.repository = instrumentRepository(repository);
    const tombstoneTtlMs = opts.tombstoneTtlMs ?? DEFAULT_TOMBSTONE_TTL_MS;
    if (typeof tombstoneTtlMs !== 'number' || Number.isNaN(tombstoneTtlMs) || tombstoneTtlMs < 0)
      throw new InvalidArgumentError('tombstoneTtlMs must be a number >= 0');
    const lifecycle: LifecycleContext = {
      repository: this.repository,
      emit: (name, payload) => this.emit(name, payload),
      logger: this.logger,
      now: this.now,
    };
    this.eraser = new SessionEraser(lifecycle, tombstoneTtlMs);
    this.redactor = new EventRedactor(lifecycle, opts.summaryRegenerationClient);
    this.retention = new RetentionRunner(lifecycle, this.eraser);
    this.reverter = new CompactionReverter({
      repository: this.repository,
      now: this.now,
      locked: (sessionId, work) => {
        const leased = () => this.underCompactionLease(sessionId, work);
        return this.lock === null ? leased() : this.lock.run(sessionId, leased);
      },
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
   * Atomic through the repository's `updateSessionMetadata` (every built-in repository has it): concurrent
   * updates of one session, from this and other processes, all land. `update` may then run more than once, so
   * keep it pure. A custom repository without that method gets a plain read then save, where a concurrent
   * update may be overwritten.
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
    const ids = await this.repository.findExpiredSessionIds(requireDate(before, 'before'));
    let deleted = 0;
    for (const id of ids) deleted += (await this.eraser.eraseSession(id, 'expired')).sessions;
    await this.eraser.purgeExpiredTombstones(1000);
    if (deleted > 0) await this.repository.reclaimStorage?.();
    return deleted;
  }

  /** Once a lifecycle operation is done, lets the store make the removed bytes unrecoverable (SQLite secureDelete). */
  private async reclaiming<T>(operation: Promise<T>): Promise<T> {
    const result = await operation;
    await this.repository.reclaimStorage?.();
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
   * 1. missing session → "Session not found: <id>";
   * 2. read the version BEFORE the events, so that any append after it makes the CAS write fail;
   * 3. read the active window only (archived events are never re-processed);
   * 4. trigger false → the window unchanged, no write;
   * 5. run the strategy; if it archived something, commit with compactEvents(…, version);
   * 6. CAS lost → the window as read with nothing archived — never an exception, never a retry that would
   *    call a summariser again (with conflictPolicy 'rebase', the same result may be re-committed instead).
   * With `options.knownWindow` the trigger is first asked about that window: when it does not fire, steps 1–3
   * are skipped (a chat turn already holds the window: no round trip); when it fires, 1–6 run as above.
   * With `options.range`, step 5 runs the strategy over the range only and puts its result in the range's
   * place. A committed compaction is recorded (see `listCompactions`) when the repository keeps records.
   */
  async compact(
    sessionId: string,
    trigger: CompactionTriggerLike,
    strategy: CompactionStrategyLike,
    options: CompactOptions = {},
  ): Promise<CompactionResult> {
    requireStorableText(sessionId, 'sessionId');
    const t = toCompactionTrigger(trigger);
    const s = toCompactionStrategy(strategy);
    const client = (s as { chatClient?: ChatClient }).chatClient;
    const known = options?.knownWindow;
    if (known !== undefined) requireKnownWindow(known, sessionId);
    const range = options?.range === undefined ? undefined : requireCompactionRange(options.range);
    const name = strategyName(strategy);
    const context: CompactionContext = { strategy: name, range };
    return traceCompaction(sessionId, name, async (telemetry) => {
      if (known !== undefined && !this.redactor.hasTainted(known.events)) {
        const events = known.events;
        const fired = await t.shouldCompact(CompactionRequest.of(known.session, events));
        if (!fired) {
          telemetry.windowRead(events.length, () => estimateEventsTokens(events, this.estimator));
          telemetry.triggered(false);
          this.emit('compactionSkipped', { sessionId, reason: 'trigger-not-fired' });
          return CompactionResult.noop(events);
        }
      }
      const shouldCompact = t.shouldCompact.bind(t);
      const run = () =>
        this.compactionLock === null
          ? this.compactUnlocked(sessionId, shouldCompact, s.compact.bind(s), telemetry, client, context)
          : this.compactUnderLease(this.compactionLock, sessionId, shouldCompact, s.compact.bind(s), context, telemetry, client);
      return (this.lock === null ? run() : this.lock.run(sessionId, run)).catch(async (error: unknown) => {
        throw await this.eraser.explain(error, sessionId);
      });
    });
  }

  /**
   * Sets (or with null removes) the cross-process compaction lock after construction, for wrappers such as
   * SessionMemory that receive a ready service; same settings as the `compactionLock` option.
   */
  setCompactionLock(lock: CompactionLock | CompactionLockSettings | null): void {
    this.compactionLock = resolveLockSettings(lock);
  }

  /**
   * Evaluates the trigger without the lease first, so that the lock is only touched when there is work;
   * under the lease the window is read again, since the previous holder may just have compacted it.
   */
  private async compactUnderLease(
    settings: ResolvedLockSettings,
    sessionId: string,
    shouldCompact: (r: CompactionRequest) => boolean | Promise<boolean>,
    compact: (r: CompactionRequest) => Promise<CompactionResult>,
    context: CompactionContext,
    telemetry?: CompactionTelemetry,
    chatClient?: ChatClient,
  ): Promise<CompactionResult> {
    const { request } = await this.readWindow(sessionId);
    if (!this.redactor.hasTainted(request.events) && !(await shouldCompact(request))) {
      telemetry?.windowRead(request.events.length, () => estimateEventsTokens(request.events, this.estimator));
      telemetry?.triggered(false);
      this.emit('compactionSkipped', { sessionId, reason: 'trigger-not-fired' });
      return CompactionResult.noop(request.events);
    }
    return withCompactionLease(
      settings,
      sessionId,
      this.logger,
      (held) => this.compactUnlocked(sessionId, shouldCompact, compact, telemetry, chatClient, context, held),
      async () => {
        this.logger.debug('compaction lease held by another holder; skipped', { sessionId });
        telemetry?.nothingToArchive('lock-held');
        this.emit('compactionSkipped', { sessionId, reason: 'lock-held' });
        return CompactionResult.noop((await this.readWindow(sessionId)).request.events, 'lock-held');
      },
    );
  }

  /**
   * Runs `work` holding the configured cross-process compaction lease (none configured: at once), so that a
   * revert and a compaction of one session in two processes never interleave. A revert has no no-op result
   * to return: when another holder keeps the lease past `waitMs`, it is refused, having changed nothing.
   */
  private underCompactionLease<T>(sessionId: string, work: (held: () => boolean) => Promise<T>): Promise<T> {
    const settings = this.compactionLock;
    if (settings === null) return work(() => true);
    return withCompactionLease(settings, sessionId, this.logger, work, async () => {
      throw new IllegalStateError(
        `Session ${sessionId} is being compacted by another holder of the compaction lock; the revert changed nothing, try again`,
      );
    });
  }

  /** What compact would do, without writing; summarising strategies skip the model unless `callModel`. */
  async previewCompaction(
    sessionId: string,
    trigger: CompactionTriggerLike,
    strategy: CompactionStrategyLike,
    options: PreviewOptions = {},
  ): Promise<CompactionPreview> {
    requireStorableText(sessionId, 'sessionId');
    const t = toCompactionTrigger(trigger);
    const s = toCompactionStrategy(strategy);
    const { request } = await this.readWindow(sessionId);
    // Resolved before the trigger runs, as compact does: a bad range is an error whatever the trigger says.
    const scope = options.range === undefined ? null : resolveCompactionRange(request.events, options.range, this.now());
    const tokensBefore = estimateEventsTokens(request.events, this.estimator);
    const base = {
      tokensBefore,
      eventsBefore: request.events.length,
      ...(options.range !== undefined ? { range: scope === null ? null : rangeBounds(request.events, scope) } : {}),
    };
    if (!(await t.shouldCompact(request))) {
      return {
        ...base,
        triggered: false,
        result: CompactionResult.noop(request.events),
        tokensAfter: tokensBefore,
        eventsAfter: request.events.length,
        modelCalled: false,
      };
    }
    // With a range, the strategy previews the range only and its result takes the range's place.
    if (options.range !== undefined && scope === null) {
      return {
        ...base,
        triggered: true,
        result: CompactionResult.noop(request.events),
        tokensAfter: tokensBefore,
        eventsAfter: request.events.length,
        modelCalled: false,
      };
    }
    const scoped = scope === null ? request : request.withEvents(request.events.slice(scope.start, scope.end));
    const preview: Omit<StrategyPreview, 'modelCalled'> & { modelCalled: boolean | undefined } =
      s.preview !== undefined && options.callModel !== true
        ? await s.preview(scoped)
        : { result: await s.compact(scoped), modelCalled: s.preview !== undefined ? true : undefined };
    const result = scope === null ? preview.result : placeInWindow(request.events, scope, preview.result);
    return {
      ...base,
      triggered: true,
      result,
      tokensAfter: estimateEventsTokens(result.compactedEvents, this.estimator),
      eventsAfter: result.compactedEvents.length,
      modelCalled: preview.modelCalled,
      ...(preview.summarizedEvents !== undefined ? { summarizedEvents: preview.summarizedEvents } : {}),
      ...(preview.stages !== undefined ? { stages: preview.stages } : {}),
    };
  }

  /** The session's committed compactions, newest first (reverted ones included, with `revertedAt`). */
  async listCompactions(sessionId: string, options: CompactionAccessOptions = {}): Promise<CompactionRecord[]> {
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

  private async readWindow(sessionId: string): Promise<{ version: number; request: CompactionRequest }> {
    const session = await this.repository.findById(sessionId);
    if (session === null) throw new InvalidArgumentError(`Session not found: ${sessionId}`);
    const version = await this.repository.getEventVersion(sessionId);
    const events = await this.repository.findEvents(sessionId, EventFilter.active());
    const originals = await maskedOriginals(this.repository, sessionId, events);
    return { version, request: CompactionRequest.of(session, events, { originals }) };
  }

  private async compactUnlocked(
    sessionId: string,
    shouldCompact: (r: CompactionRequest) => boolean | Promise<boolean>,
    compact: (r: CompactionRequest) => Promise<CompactionResult>,
    telemetry?: CompactionTelemetry,
    chatClient?: ChatClient,
    context: CompactionContext = { strategy: 'function', range: undefined },
    leaseHeld: () => boolean = () => true,
  ): Promise<CompactionResult> {
    let window = await this.readWindow(sessionId);
    if (this.redactor.hasTainted(window.request.events)) {
      // A summary written from since-redacted content must not be fed to the next summary: rewrite it first.
      await this.reclaiming(this.redactor.regenerate(sessionId, undefined, chatClient !== undefined ? { chatClient } : {}));
      window = await this.readWindow(sessionId);
    }
    const { version, request: read } = window;
    const events = read.events;
    // Resolved before the trigger runs, so that a bad range is an error whatever the trigger says.
    const scope = context.range === undefined ? null : resolveCompactionRange(events, context.range, this.now());
    telemetry?.windowRead(events.length, () => estimateEventsTokens(events, this.estimator));
    const fired = await shouldCompact(read);
    telemetry?.triggered(fired);
    if (!fired) {
      this.emit('compactionSkipped', { sessionId, reason: 'trigger-not-fired' });
      return CompactionResult.noop(events);
    }
    const before = await runBeforeHooks(this.hooks, { sessionId, session: read.session, events }, this.logger);
    if (before.veto) {
      this.logger.info('compaction vetoed by beforeCompaction', { sessionId, reason: before.reason });
      telemetry?.nothingToArchive('vetoed');
      this.emit('compactionSkipped', { sessionId, reason: 'vetoed' });
      return CompactionResult.noop(events);
    }
    if (context.range !== undefined && scope === null) {
      telemetry?.nothingToArchive('empty-range');
      this.emit('compactionSkipped', { sessionId, reason: 'empty-range' });
      return CompactionResult.noop(events);
    }
    const inScope = scope === null ? events : events.slice(scope.start, scope.end);
    const request =
      before.instructions.length === 0 && scope === null
        ? read
        : CompactionRequest.of(read.session, inScope, { originals: read.originals.values(), instructions: before.instructions });
    const recordRange = scope === null ? null : rangeBounds(events, scope);
    const commit = (
      windowBefore: readonly SessionEvent[],
      archived: readonly SessionEvent[],
      retained: readonly SessionEvent[],
      v: number,
    ) => this.commitCompaction(sessionId, windowBefore, archived, retained, v, context.strategy, recordRange);
    this.emit('compactionStarted', { sessionId });
    try {
      const proposed = await compact(request);
      // The strategy's window takes the range's place; what lies outside the range is kept as it is.
      const result = scope === null ? proposed : placeInWindow(events, scope, proposed);
      if (result.archivedEvents.length === 0) {
        telemetry?.nothingToArchive(result.skipReason ?? 'nothing-to-archive');
        this.emit('compactionSkipped', { sessionId, reason: result.skipReason ?? 'nothing-to-archive' });
        return result;
      }
      // The guarantee holds for any strategy, custom ones included: a result losing a pin is not committed.
      const lost = pinnedEventsLost(events, result);
      if (lost.length > 0) {
        this.logger.warn('the strategy archived or dropped pinned events; nothing committed', {
          sessionId,
          pinned: lost.map((e) => e.id),
        });
        telemetry?.nothingToArchive('pinned-event');
        this.emit('compactionSkipped', { sessionId, reason: 'pinned-event' });
        return CompactionResult.noop(events);
      }
      if (!leaseHeld()) {
        // Another holder may have taken over and be summarising the same window: committing would race it.
        this.logger.warn('compaction lease lost before commit; nothing committed', { sessionId });
        telemetry?.nothingToArchive('lock-lost');
        this.emit('compactionSkipped', { sessionId, reason: 'lock-lost' });
        return CompactionResult.noop(events, 'lock-lost').withUsage(result.usage);
      }
      const committed = await commit(events, result.archivedEvents, result.compactedEvents, version);
      if (committed !== false) {
        telemetry?.committed(this.committedFigures(result), false);
        this.emit('compactionCompleted', { sessionId, result, rebased: false, ...committed, ...rangeOf(recordRange) });
        await this.afterCommit(sessionId, events, result);
        return result;
      }
      telemetry?.casConflict();
      const rebase = this.conflictPolicy === 'rebase' ? await this.rebase(sessionId, events, result, commit) : null;
      if (rebase !== null) {
        const { result: rebased, compactionId } = rebase;
        telemetry?.committed(this.committedFigures(rebased), true);
        this.emit('compactionCompleted', { sessionId, result: rebased, rebased: true, ...compactionId, ...rangeOf(recordRange) });
        await this.afterCommit(sessionId, events, rebased);
        return rebased;
      }
      telemetry?.lost();
      this.logger.debug('compaction lost its CAS race; skipped', { sessionId, expectedVersion: version });
      this.emit('compactionSkipped', { sessionId, reason: 'cas-conflict' });
      // Nothing was written, but the summariser was paid: the usage stays on the no-op.
      return CompactionResult.noop(events).withUsage(result.usage);
    } catch (error) {
      this.emit('compactionFailed', { sessionId, error });
      throw error;
    }
  }

  /** Runs the `afterCompaction` hooks of a committed compaction (their errors are logged, never thrown). */
  private async afterCommit(sessionId: string, window: readonly SessionEvent[], result: CompactionResult): Promise<void> {
    if (this.hooks.length === 0) return;
    const before = new Set(window.map((e) => e.id));
    const summaryEvents = result.compactedEvents.filter((e) => e.isSynthetic() && !before.has(e.id));
    await runAfterHooks(this.hooks, { sessionId, result, archivedEvents: result.archivedEvents, summaryEvents }, this.logger);
  }

  /**
   * Registers compaction hooks (see `CompactionHooks`); returns a function that removes them. Hooks run in
   * registration order, after those given to the constructor.
   */
  addCompactionHooks(hooks: CompactionHooks): () => void {
    const h = requireHooks(hooks);
    if (isCompactionStatsHooks(h) && this.defaultStatsHooks !== undefined) {
      // Explicit stats hooks replace the default ones: the totals are recorded once.
      this.hooks.splice(this.hooks.indexOf(this.defaultStatsHooks), 1);
      this.defaultStatsHooks = undefined;
    }
    this.hooks.push(h);
    return () => {
      const i = this.hooks.indexOf(h);
      if (i >= 0) this.hooks.splice(i, 1);
    };
  }

  /**
   * Re-commits `result` on top of appends that happened meanwhile. Safe only when the window we read is
   * still an unchanged prefix of the current one: then the new events simply follow the retained window.
   */
  private async rebase(
    sessionId: string,
    read: readonly SessionEvent[],
    result: CompactionResult,
    commit: CommitCompaction,
  ): Promise<{ result: CompactionResult; compactionId: { compactionId?: string } } | null> {
    for (let attempt = 0; attempt < this.maxRebaseAttempts; attempt++) {
      const version = await this.repository.getEventVersion(sessionId);
      const current = await this.repository.findEvents(sessionId, EventFilter.active());
      if (current.length < read.length || read.some((e, i) => current[i]!.id !== e.id)) return null;
      const appended = current.slice(read.length);
      const retained = [...result.compactedEvents, ...appended];
      const committed = await commit(current, result.archivedEvents, retained, version);
      if (committed !== false) {
        this.logger.debug('compaction rebased over concurrent appends', { sessionId, appended: appended.length, attempt });
        return {
          result: new CompactionResult(retained, result.archivedEvents, result.tokensEstimatedSaved, undefined, result.usage),
          compactionId: committed,
        };
      }
    }
    return null;
  }

  /**
   * compactEvents, recorded as a compaction unit in the same atomic step when the repository keeps records.
   * false: the CAS was lost (nothing written, nothing recorded).
   */
  private async commitCompaction(
    sessionId: string,
    windowBefore: readonly SessionEvent[],
    archived: readonly SessionEvent[],
    retained: readonly SessionEvent[],
    version: number,
    strategy: string,
    range: CompactionRecordRange | null,
  ): Promise<false | { compactionId?: string }> {
    // Only a repository that can list records stores them: another one is called as before, without one.
    if (this.repository.listCompactions === undefined) {
      return (await this.repository.compactEvents(sessionId, archived, retained, version)) ? {} : false;
    }
    const record = buildCompactionRecord({
      id: randomUUID(),
      sessionId,
      createdAt: this.now(),
      strategy,
      versionBefore: version,
      windowBefore,
      archived,
      retained,
      range,
    });
    const committed = await this.repository.compactEvents(sessionId, archived, retained, version, record);
    return committed ? { compactionId: record.id } : false;
  }

  private committedFigures(result: CompactionResult) {
    return {
      archived: result.archivedEvents.length,
      tokensSaved: result.tokensEstimatedSaved,
      eventsAfter: result.compactedEvents.length,
      tokensAfter: () => estimateEventsTokens(result.compactedEvents, this.estimator),
    };
  }

  private emit<K extends SessionServiceEventName>(name: K, payload: SessionServiceEventMap[K]): void {
    for (const error of this.events.emit(name, payload)) {
      this.logger.warn('a compaction event listener threw', { event: name, error: String(error) });
    }
  }
}
