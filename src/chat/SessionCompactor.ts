import { CompactionResult } from '../compaction/CompactionResult.js';
import type { CompactionRequest } from '../compaction/CompactionRequest.js';
import type { CompactionStrategy } from '../compaction/CompactionStrategy.js';
import type { CompactionTrigger } from '../compaction/CompactionTrigger.js';
import type { Logger } from '../logging.js';
import type { KnownWindow } from '../service/SessionService.js';
import type { CompactionSkipReason } from '../service/SessionServiceEvents.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import { escalatingStrategy, type EscalationReport } from './escalatingStrategy.js';
import type { SessionMemoryService } from './SessionMemoryTypes.js';
import { turnSafeStrategy } from './turnSafeStrategy.js';

const ALWAYS: CompactionTrigger = { shouldCompact: () => true };
/** Re-commits of one proposal over concurrent appends before it is given up (the summary then is not used). */
const MAX_REBASES = 5;
/** Sessions whose breaker state is kept in memory; the oldest is forgotten first. */
const MAX_BREAKERS = 10_000;

/** After `failures` compactions in a row in which the strategy archived nothing while the trigger fired, it is skipped for `cooldownMs`. */
export interface CircuitBreakerSettings {
  failures: number;
  cooldownMs: number;
}

export const DEFAULT_CIRCUIT_BREAKER: Readonly<CircuitBreakerSettings> = Object.freeze({ failures: 2, cooldownMs: 60_000 });

/** One compaction to run: by the trigger (escalating when it cannot reach it), or unconditionally (a window guard). */
export interface CompactionRun {
  /** Compact whatever the trigger says (a window guard), with no escalation: the caller checks the window. */
  always?: boolean;
  /** Another strategy than the configured one (the mechanical cut of a window guard). */
  strategy?: CompactionStrategy;
  /** Inside a turn: these events (the turn's input, pending calls) and the turn's opener must stay. */
  keep?: ReadonlySet<string>;
  knownWindow?: KnownWindow;
}

export interface SessionCompactorOptions {
  service: SessionMemoryService;
  trigger: CompactionTrigger;
  strategy: CompactionStrategy;
  /** What runs when the strategy cannot reach the trigger's target; null: nothing (the next turn tries again). */
  fallback: CompactionStrategy | null;
  breaker: CircuitBreakerSettings | null;
  estimator: TokenCountEstimator;
  logger: Logger;
  now?: () => number;
}

/** A strategy that remembers its last proposal and the window it was made for. */
interface Memo {
  strategy: CompactionStrategy;
  window: readonly SessionEvent[] | undefined;
  proposal: CompactionResult | undefined;
}

function memoize(strategy: CompactionStrategy): Memo {
  const memo: Memo = { strategy: Object.create(strategy) as CompactionStrategy, window: undefined, proposal: undefined };
  memo.strategy.compact = async (request: CompactionRequest) => {
    const proposal = await strategy.compact(request);
    memo.window = request.events;
    memo.proposal = proposal;
    return proposal;
  };
  return memo;
}

/**
 * The proposal of `memo` on top of what was appended since (the window it was made for must still be an
 * unchanged prefix); a no-op otherwise — the window changed in another way (another compaction), so the
 * proposal no longer applies and nothing is re-computed.
 */
function rebased(memo: Memo, strategy: CompactionStrategy): CompactionStrategy {
  const rebase = Object.create(strategy) as CompactionStrategy;
  rebase.compact = async (request: CompactionRequest) => {
    const read = memo.window!;
    const proposal = memo.proposal!;
    const current = request.events;
    if (current.length < read.length || read.some((e, i) => current[i]!.id !== e.id)) return CompactionResult.noop(current);
    return new CompactionResult(
      [...proposal.compactedEvents, ...current.slice(read.length)],
      proposal.archivedEvents,
      proposal.tokensEstimatedSaved,
    );
  };
  return rebase;
}

/**
 * How SessionMemory compacts a session: the configured trigger and strategy, escalating to the fallback when
 * the strategy cannot reach the trigger's target, a circuit breaker that stops calling a strategy that keeps
 * archiving nothing (a summariser that is down), a commit lost to a concurrent append re-committed rebased —
 * so a summariser is never paid twice for the same range — and the per-session queue of background runs.
 */
export class SessionCompactor {
  private readonly breakers = new Map<string, { failures: number; openUntil: number }>();
  private readonly jobs = new Map<string, { again: boolean; done: Promise<void> }>();
  private readonly now: () => number;

  constructor(private readonly options: SessionCompactorOptions) {
    this.now = options.now ?? Date.now;
  }

  /** One compaction of `sessionId` (see CompactionRun); a no-op result when nothing was committed. */
  async compact(sessionId: string, run: CompactionRun = {}): Promise<CompactionResult> {
    const { service, estimator, logger } = this.options;
    const trigger = run.always === true ? ALWAYS : this.options.trigger;
    let strategy = run.strategy ?? this.options.strategy;
    if (run.always !== true && this.options.fallback !== null) {
      strategy = escalatingStrategy(strategy, this.options.trigger, this.options.fallback, estimator, {
        skipPrimary: this.breakerOpen(sessionId),
        report: (report) => this.record(sessionId, report),
      });
    }
    if (run.keep !== undefined) strategy = turnSafeStrategy(strategy, run.keep, logger, estimator);
    const memo = memoize(strategy);
    let skipped: CompactionSkipReason | undefined;
    const off = service.events?.on('compactionSkipped', (e) => {
      if (e.sessionId === sessionId) skipped = e.reason;
    });
    try {
      const result = await service.compact(
        sessionId,
        trigger,
        memo.strategy,
        run.knownWindow === undefined ? {} : { knownWindow: run.knownWindow },
      );
      if (!result.isNoop() || skipped !== 'cas-conflict' || memo.proposal === undefined || memo.proposal.isNoop()) return result;
      // An append won the version race: the same proposal, on top of what was appended — never a second
      // summariser call for the same range.
      for (let attempt = 0; attempt < MAX_REBASES; attempt++) {
        skipped = undefined;
        const again = await service.compact(sessionId, ALWAYS, rebased(memo, strategy));
        if (!again.isNoop()) {
          logger.debug('compaction re-committed over concurrent appends', { sessionId, attempt });
          return again.withUsage(result.usage);
        }
        if (skipped !== 'cas-conflict') break;
      }
      logger.warn('a compaction could not be committed: the window changed while it ran; its summary is not used', {
        sessionId,
      });
      return result;
    } finally {
      off?.();
    }
  }

  /**
   * Runs `job` for `sessionId` after the current background run of the session, coalesced: while one runs,
   * any number of requests add one more run (`first` false: the window it knew is stale). A failure is logged
   * and changes nothing.
   */
  schedule(sessionId: string, job: (first: boolean) => Promise<void>): void {
    const queued = this.jobs.get(sessionId);
    if (queued !== undefined) {
      queued.again = true;
      return;
    }
    const entry = { again: false, done: Promise.resolve() };
    entry.done = (async () => {
      let first = true;
      do {
        entry.again = false;
        try {
          await job(first);
        } catch (error) {
          this.options.logger.error('a background compaction failed; the log is unchanged and the next turn retries', {
            sessionId,
            error: String(error),
          });
        }
        first = false;
      } while (entry.again);
    })().finally(() => this.jobs.delete(sessionId));
    this.jobs.set(sessionId, entry);
  }

  /** The background run of `sessionId` in flight, if any. */
  inFlight(sessionId: string): Promise<void> | undefined {
    return this.jobs.get(sessionId)?.done;
  }

  /** Resolves when no background run is left (for `sessionId`, or for every session). */
  async idle(sessionId?: string): Promise<void> {
    for (;;) {
      const pending = sessionId === undefined ? [...this.jobs.values()].map((j) => j.done) : [this.jobs.get(sessionId)?.done];
      const running = pending.filter((p): p is Promise<void> => p !== undefined);
      if (running.length === 0) return;
      await Promise.all(running);
    }
  }

  private breakerOpen(sessionId: string): boolean {
    const settings = this.options.breaker;
    const state = this.breakers.get(sessionId);
    return settings !== null && state !== undefined && state.failures >= settings.failures && this.now() < state.openUntil;
  }

  private record(sessionId: string, report: EscalationReport): void {
    const settings = this.options.breaker;
    if (settings === null || !report.primaryRan) return;
    if (report.primaryArchived) {
      this.breakers.delete(sessionId);
      return;
    }
    const state = this.breakers.get(sessionId) ?? { failures: 0, openUntil: 0 };
    state.failures++;
    if (state.failures >= settings.failures) {
      state.openUntil = this.now() + settings.cooldownMs;
      this.options.logger.warn(
        'compaction circuit open: the strategy archived nothing while the trigger fired; the fallback runs alone',
        {
          sessionId,
          failures: state.failures,
          cooldownMs: settings.cooldownMs,
        },
      );
    }
    this.breakers.delete(sessionId);
    this.breakers.set(sessionId, state);
    if (this.breakers.size > MAX_BREAKERS) this.breakers.delete(this.breakers.keys().next().value!);
  }
}
