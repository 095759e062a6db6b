import { CompactionRequest } from '../../compaction/CompactionRequest.js';
import { CompactionResult } from '../../compaction/CompactionResult.js';
import {
  placeInWindow,
  rangeBounds,
  requireCompactionRange,
  resolveCompactionRange,
  type CompactionRange,
} from '../../compaction/CompactionRange.js';
import {
  toCompactionStrategy,
  type CompactionStrategy,
  type CompactionStrategyLike,
} from '../../compaction/CompactionStrategy.js';
import { toCompactionTrigger, type CompactionTrigger, type CompactionTriggerLike } from '../../compaction/CompactionTrigger.js';
import { InvalidArgumentError } from '../../errors.js';
import { withCompactionLease, type ResolvedLockSettings } from '../../lock/compactionLease.js';
import type { Logger } from '../../logging.js';
import type { CompactionRecordRange } from '../../repository/CompactionRecord.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
import { SessionEvent } from '../../session/SessionEvent.js';
import type { ChatClient } from '../../summarization/ChatClient.js';
import { strategyName, traceCompaction, type CompactionTelemetry } from '../../telemetry/CompactionTelemetry.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import type { UsageRecord } from '../../tokens/UsageRecord.js';
import { invalid, requireStorableText } from '../../validation/inputs.js';
import type { EventRedactor } from '../lifecycle/EventRedactor.js';
import { reclaimStorage } from '../lifecycle/reclaimStorage.js';
import { pinnedEventsLost } from '../pinning.js';
import type { CompactOptions, KnownWindow } from '../SessionService.js';
import type { CompactionSkipReason, EmitServiceEvent } from '../SessionServiceEvents.js';
import { CompactionCommitter, type CommitTarget, type CompactionCommitterOptions } from './CompactionCommitter.js';
import type { CompactionHookList } from './CompactionHookList.js';
import type { CompactionLocks } from './CompactionLocks.js';
import { readCompactionWindow } from './readCompactionWindow.js';

export interface CompactionRunnerOptions extends CompactionCommitterOptions {
  repository: SessionRepository;
  logger: Logger;
  now: () => Date;
  /** Counts the window's tokens for telemetry. */
  estimator: TokenCountEstimator;
  locks: CompactionLocks;
  hooks: CompactionHookList;
  /** Finds and rewrites summaries written from since-redacted content before a strategy reads them. */
  redactor: EventRedactor;
  /** Turns "Session not found" of a deleted session into an error that says it was deleted. */
  explain: (error: unknown, sessionId: string) => Promise<unknown>;
  emit: EmitServiceEvent;
}

/** Reads of the window before the strategy runs, while its version keeps moving (the last one is used as it is). */
const MAX_WINDOW_READS = 3;

/** One compact() call, as its steps need it. */
interface CompactionJob {
  sessionId: string;
  trigger: CompactionTrigger;
  strategy: CompactionStrategy;
  /** The strategy's name, kept in the compaction record. */
  strategyName: string;
  /** The trigger's name, kept in the compaction record too. */
  triggerName: string;
  /** The part of the window the strategy sees; undefined for all of it. */
  range: CompactionRange | undefined;
  /** The strategy's own chat client, which rewrites summaries tainted by a redaction before it runs. */
  chatClient: ChatClient | undefined;
  telemetry: CompactionTelemetry;
}

/** A compaction that ends without a commit, and what it reports (see CompactionRunner.skip). */
interface Skip {
  reason: CompactionSkipReason;
  /** The window, returned unchanged. */
  events: readonly SessionEvent[];
  /** The strategy's own no-op result: returned as it is. */
  result?: CompactionResult;
  /** What a summariser call before the skip cost: it was paid, so it stays on the no-op result. */
  usage?: UsageRecord | undefined;
  log?: { level: 'debug' | 'info' | 'warn'; message: string; fields?: Record<string, unknown> };
}

/**
 * The compaction protocol of DefaultSessionService.compact:
 * 1. missing session → "Session not found: <id>";
 * 2. read the version BEFORE the events, so that any append after it makes the CAS write fail;
 * 3. read the active window only (archived events are never re-processed);
 * 4. trigger false → the window unchanged, no write;
 * 5. run the strategy; if it archived something, commit with compactEvents(…, version);
 * 6. CAS lost → the window as read with nothing archived — never an exception, never a retry that would
 *    call a summariser again (with conflictPolicy 'rebase', the same result may be re-committed instead).
 * It runs under the session's in-process lock and, when configured, the cross-process compaction lease,
 * which is taken only once the trigger fires. Every way it ends without a commit goes through `skip`.
 */
export class CompactionRunner {
  private readonly committer: CompactionCommitter;

  constructor(private readonly options: CompactionRunnerOptions) {
    this.committer = new CompactionCommitter(options);
  }

  /**
   * With `options.knownWindow` the trigger is first asked about that window: when it does not fire, steps 1–3
   * are skipped (a chat turn already holds the window: no round trip). With `options.range`, step 5 runs the
   * strategy over the range only and puts its result in the range's place.
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
    const known = options?.knownWindow;
    if (known !== undefined) requireKnownWindow(known, sessionId);
    const range = options?.range === undefined ? undefined : requireCompactionRange(options.range);
    const name = strategyName(strategy);
    return traceCompaction(sessionId, name, async (telemetry) => {
      const job: CompactionJob = {
        sessionId,
        trigger: t,
        strategy: s,
        strategyName: name,
        triggerName: strategyName(trigger),
        range,
        chatClient: (s as { chatClient?: ChatClient }).chatClient,
        telemetry,
      };
      if (known !== undefined && !this.options.redactor.hasTainted(known.events)) {
        if (!(await t.shouldCompact(CompactionRequest.of(known.session, known.events)))) {
          return this.skipUntriggered(job, known.events);
        }
      }
      const { locks } = this.options;
      const run = () => {
        const lease = locks.lease;
        return lease === null ? this.run(job, () => true) : this.runUnderLease(job, lease);
      };
      return locks.inProcess(sessionId, run).catch(async (error: unknown) => {
        throw await this.options.explain(error, sessionId);
      });
    });
  }

  /**
   * Evaluates the trigger without the lease first, so that the lock is only touched when there is work;
   * under the lease the window is read again, since the previous holder may just have compacted it.
   */
  private async runUnderLease(job: CompactionJob, lease: ResolvedLockSettings): Promise<CompactionResult> {
    const { repository, redactor, logger } = this.options;
    const { request } = await readCompactionWindow(repository, job.sessionId);
    if (!redactor.hasTainted(request.events) && !(await job.trigger.shouldCompact(request))) {
      return this.skipUntriggered(job, request.events);
    }
    return withCompactionLease(
      lease,
      job.sessionId,
      logger,
      (held) => this.run(job, held),
      async () => {
        const { request: current } = await readCompactionWindow(repository, job.sessionId);
        return this.skip(job, {
          reason: 'lock-held',
          events: current.events,
          log: { level: 'debug', message: 'compaction lease held by another holder; skipped' },
        });
      },
    );
  }

  /** Steps 1–6 under the locks; `leaseHeld()` says, right before the commit, that the lease was never lost. */
  private async run(job: CompactionJob, leaseHeld: () => boolean): Promise<CompactionResult> {
    const { repository, redactor, hooks, now } = this.options;
    const { sessionId, telemetry } = job;
    let window = await readCompactionWindow(repository, sessionId);
    if (redactor.hasTainted(window.request.events)) {
      // A summary written from since-redacted content must not be fed to the next summary: rewrite it first.
      const chatClient = job.chatClient;
      const regenerated = await redactor.tryRegenerate(sessionId, undefined, chatClient !== undefined ? { chatClient } : {});
      if (regenerated === null) {
        // Writers kept changing the log: like any lost race, a no-op (the next compaction regenerates).
        return this.skip(job, {
          reason: 'cas-conflict',
          events: window.request.events,
          log: { level: 'debug', message: 'regenerating tainted summaries lost its CAS race; skipped' },
        });
      }
      await reclaimStorage(repository);
      window = await readCompactionWindow(repository, sessionId);
    }
    // Resolved before the trigger runs, so that a bad range is an error whatever the trigger says.
    if (job.range !== undefined) resolveCompactionRange(window.request.events, job.range, now());
    telemetry.windowRead(window.request.events.length, () => this.tokens(window.request.events));
    if (!(await job.trigger.shouldCompact(window.request))) {
      return this.skip(job, { reason: 'trigger-not-fired', events: window.request.events });
    }
    // The version is checked again right before the strategy runs (the model is not called yet): a window that
    // moved meanwhile is read again and the trigger asked again, so a hot session's compaction works on the
    // current window, and one that another writer has just compacted is not summarised a second time.
    for (let attempt = 1; attempt <= MAX_WINDOW_READS; attempt++) {
      if ((await repository.getEventVersion(sessionId)) === window.version) break;
      window = await readCompactionWindow(repository, sessionId);
      if (!(await job.trigger.shouldCompact(window.request))) {
        return this.skip(job, { reason: 'trigger-not-fired', events: window.request.events });
      }
    }
    const { version, request: read } = window;
    const events = read.events;
    const scope = job.range === undefined ? null : resolveCompactionRange(events, job.range, now());
    telemetry.triggered(true);
    const before = await hooks.before(sessionId, read.session, events);
    if (before.veto) {
      return this.skip(job, {
        reason: 'vetoed',
        events,
        log: { level: 'info', message: 'compaction vetoed by beforeCompaction', fields: { reason: before.reason } },
      });
    }
    if (job.range !== undefined && scope === null) return this.skip(job, { reason: 'empty-range', events });
    const inScope = scope === null ? events : events.slice(scope.start, scope.end);
    const request =
      before.instructions.length === 0 && scope === null
        ? read
        : CompactionRequest.of(read.session, inScope, { originals: read.originals.values(), instructions: before.instructions });
    const target: CommitTarget = {
      sessionId,
      strategy: job.strategyName,
      trigger: job.triggerName,
      range: scope === null ? null : rangeBounds(events, scope),
    };
    this.options.emit('compactionStarted', { sessionId });
    try {
      const proposed = await job.strategy.compact(request);
      // The strategy's window takes the range's place; what lies outside the range is kept as it is.
      const result = scope === null ? proposed : placeInWindow(events, scope, proposed);
      if (result.archivedEvents.length === 0) {
        return this.skip(job, { reason: result.skipReason ?? 'nothing-to-archive', events, result });
      }
      // The guarantee holds for any strategy, custom ones included: a result losing a pin is not committed.
      const lost = pinnedEventsLost(events, result);
      if (lost.length > 0) {
        return this.skip(job, {
          reason: 'pinned-event',
          events,
          log: {
            level: 'warn',
            message: 'the strategy archived or dropped pinned events; nothing committed',
            fields: { pinned: lost.map((e) => e.id) },
          },
        });
      }
      if (!leaseHeld()) {
        // Another holder may have taken over and be summarising the same window: committing would race it.
        return this.skip(job, {
          reason: 'lock-lost',
          events,
          usage: result.usage,
          log: { level: 'warn', message: 'compaction lease lost before commit; nothing committed' },
        });
      }
      const committed = await this.committer.commit(target, events, result, version, telemetry);
      if (committed === null) {
        // Nothing was written, but the summariser was paid: the usage stays on the no-op.
        return this.skip(job, {
          reason: 'cas-conflict',
          events,
          usage: result.usage,
          log: { level: 'debug', message: 'compaction lost its CAS race; skipped', fields: { expectedVersion: version } },
        });
      }
      const done = committed.result;
      telemetry.committed(
        {
          archived: done.archivedEvents.length,
          tokensSaved: done.tokensEstimatedSaved,
          eventsAfter: done.compactedEvents.length,
          tokensAfter: () => this.tokens(done.compactedEvents),
        },
        committed.rebased,
      );
      this.options.emit('compactionCompleted', {
        sessionId,
        result: done,
        rebased: committed.rebased,
        versionBefore: committed.versionBefore,
        ...(committed.compactionId !== undefined ? { compactionId: committed.compactionId } : {}),
        ...rangeOf(target.range),
      });
      await hooks.after(sessionId, events, done);
      return done;
    } catch (error) {
      this.options.emit('compactionFailed', { sessionId, error });
      throw error;
    }
  }

  private skipUntriggered(job: CompactionJob, events: readonly SessionEvent[]): CompactionResult {
    job.telemetry.windowRead(events.length, () => this.tokens(events));
    return this.skip(job, { reason: 'trigger-not-fired', events });
  }

  /**
   * The one way a compaction ends without a commit: the log line, the telemetry outcome and the
   * `compactionSkipped` event, then the result — the strategy's own no-op, or the window unchanged. The lock
   * outcomes ('lock-held', 'lock-lost') are also told on the result, since a caller cannot tell them apart
   * from a no-op otherwise.
   */
  private skip(job: CompactionJob, skip: Skip): CompactionResult {
    const { sessionId, telemetry } = job;
    const { reason } = skip;
    if (skip.log !== undefined) this.options.logger[skip.log.level](skip.log.message, { sessionId, ...skip.log.fields });
    if (reason === 'trigger-not-fired') telemetry.triggered(false);
    else if (reason === 'cas-conflict') telemetry.lost();
    else telemetry.nothingToArchive(reason);
    this.options.emit('compactionSkipped', { sessionId, reason });
    if (skip.result !== undefined) return skip.result;
    const noop = CompactionResult.noop(skip.events, reason === 'lock-held' || reason === 'lock-lost' ? reason : undefined);
    return skip.usage === undefined ? noop : noop.withUsage(skip.usage);
  }

  private tokens(events: readonly SessionEvent[]): number {
    return estimateEventsTokens(events, this.options.estimator);
  }
}

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
