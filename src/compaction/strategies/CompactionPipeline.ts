import { addUsage, type UsageRecord } from '../../tokens/UsageRecord.js';
import { InvalidArgumentError, requirePositiveInt, requireText } from '../../errors.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import { calibrationRatio } from '../../tokens/calibration.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { CompactionRequest, requireRequest } from '../CompactionRequest.js';
import { CompactionResult, type StrategySkipReason } from '../CompactionResult.js';
import {
  toCompactionStrategy,
  type CompactionStageReport,
  type CompactionStrategy,
  type CompactionStrategyLike,
  type StrategyPreview,
} from '../CompactionStrategy.js';
import { RewriteDeferral, type RewriteDeferralOptions } from './rewriteDeferral.js';

/** A stage with a name for the report and, optionally, the window size from which it runs. */
export interface CompactionPipelineStage {
  strategy: CompactionStrategyLike;
  /** Shown in the stage report; default the strategy's class name. */
  name?: string;
  /**
   * The stage runs only while the window costs at least this many (calibrated) tokens; below, it is passed
   * over. Pressure bands use it: a harsher measure only once the milder ones have not brought the window down.
   */
  minTokens?: number;
}

export interface CompactionPipelineOptions extends RewriteDeferralOptions {
  /** Run in order, each on the window the previous one left; e.g. mask → strip → summarise → token budget. */
  stages: readonly (CompactionStrategyLike | CompactionPipelineStage)[];
  /** Stop as soon as the window costs at most this many tokens (scaled by the session's calibration ratio). */
  maxTokens: number;
  tokenCountEstimator?: TokenCountEstimator;
}

/** What one stage did, for reports and benchmarks (the type lives with StrategyPreview, which carries it). */
export type PipelineStageReport = CompactionStageReport;

function isStage(value: CompactionStrategyLike | CompactionPipelineStage): value is CompactionPipelineStage {
  return value !== null && typeof value === 'object' && !('compact' in value) && 'strategy' in value;
}

export interface PipelineRun {
  result: CompactionResult;
  /** The stages that ran; those after the budget was met are absent. */
  stages: PipelineStageReport[];
  /** The window fits `maxTokens` at the end. */
  fits: boolean;
  summarizedEvents?: readonly SessionEvent[];
  modelCalled: boolean;
}

function requireNonNegativeInt(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new InvalidArgumentError(`${name} must be a non-negative integer`);
  }
  return value;
}

/**
 * Staged composition of strategies. Each stage sees a fresh
 * CompactionRequest of the same session over the previous stage's window; the pipeline stops as soon as the
 * window fits `maxTokens` — also before the first stage, so a window under budget is left alone.
 *
 * The result is one proposal, committed by the service in one CAS write: `compactedEvents` is the last
 * window, `archivedEvents` only events of the ORIGINAL window. A copy made by one stage (a masked tool
 * result) and archived by a later one was never stored, so it is dropped: its original is already in
 * `archivedEvents`. `tokensEstimatedSaved` is the net saving, tokens before minus tokens after.
 */
export class CompactionPipeline implements CompactionStrategy {
  readonly stages: readonly CompactionStrategy[];
  readonly maxTokens: number;
  readonly tokenCountEstimator: TokenCountEstimator;
  private readonly names: readonly string[];
  private readonly minTokens: readonly number[];
  /** The in-place rewrite deferral over the whole run (`minSavedTokens` 0: none). */
  readonly deferral: RewriteDeferral;

  constructor(options: CompactionPipelineOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    if (!Array.isArray(options.stages) || options.stages.length === 0) throw new InvalidArgumentError('stages must not be empty');
    const specs: CompactionPipelineStage[] = options.stages.map((s) => (isStage(s) ? s : { strategy: s }));
    this.stages = Object.freeze(specs.map((s) => toCompactionStrategy(s.strategy)));
    this.names = Object.freeze(
      specs.map(({ strategy: s, name }, i) => {
        if (name !== undefined) return requireText(name, `stages[${i}].name`);
        return typeof s === 'function' ? `stage ${i + 1}` : (s?.constructor?.name ?? `stage ${i + 1}`);
      }),
    );
    this.minTokens = Object.freeze(
      specs.map((s, i) => (s.minTokens === undefined ? 0 : requireNonNegativeInt(s.minTokens, `stages[${i}].minTokens`))),
    );
    this.maxTokens = requirePositiveInt(options.maxTokens, 'maxTokens');
    this.tokenCountEstimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
    this.deferral = new RewriteDeferral(options);
  }

  async compact(request: CompactionRequest): Promise<CompactionResult> {
    return (await this.run(request, false)).result;
  }

  /** Dry run: stages with a `preview` are previewed (no model call), the others run as usual. */
  async preview(request: CompactionRequest): Promise<StrategyPreview> {
    const run = await this.run(request, true);
    return {
      result: run.result,
      modelCalled: run.modelCalled,
      stages: run.stages,
      ...(run.summarizedEvents !== undefined ? { summarizedEvents: run.summarizedEvents } : {}),
    };
  }

  /** `compact` with a per-stage report (or, with `preview`, the dry run with one). */
  async run(request: CompactionRequest, preview = false): Promise<PipelineRun> {
    const original = requireRequest(request);
    const ratio = calibrationRatio(original.session);
    const cost = (events: readonly SessionEvent[]) => estimateEventsTokens(events, this.tokenCountEstimator);
    const fits = (tokens: number) => tokens * ratio <= this.maxTokens;
    const originalIds = new Set(original.events.map((e) => e.id));
    const knownOriginals = [...original.originals.values(), ...original.events];
    const archived = new Set<string>();
    const stages: PipelineStageReport[] = [];
    const summarized: SessionEvent[] = [];
    let modelCalled = false;
    let anySummarized = false;
    let window = original.events;
    let tokens = cost(window);
    let skipReason: StrategySkipReason | undefined;
    const usages: UsageRecord[] = [];
    for (let index = 0; index < this.stages.length && !fits(tokens); index++) {
      if (tokens * ratio < this.minTokens[index]!) continue;
      const stage = this.stages[index]!;
      // Later stages read the originals of what earlier stages masked (a summary is written from them).
      const stageRequest = original.withEvents(window, knownOriginals);
      let result: CompactionResult;
      if (preview && stage.preview !== undefined) {
        const p = await stage.preview(stageRequest);
        result = p.result;
        modelCalled ||= p.modelCalled;
        if (p.summarizedEvents !== undefined) {
          anySummarized = true;
          summarized.push(...p.summarizedEvents);
        }
      } else {
        result = await stage.compact(stageRequest);
      }
      if (result.usage !== undefined) usages.push(result.usage);
      for (const e of result.archivedEvents) if (originalIds.has(e.id)) archived.add(e.id);
      const after = cost(result.compactedEvents);
      stages.push({
        index,
        name: this.names[index]!,
        tokensBefore: tokens,
        tokensAfter: after,
        eventsBefore: window.length,
        eventsAfter: result.compactedEvents.length,
        archived: result.archivedEvents.length,
        ...(result.skipReason !== undefined ? { skipReason: result.skipReason } : {}),
      });
      if (!result.isNoop()) {
        window = result.compactedEvents;
        tokens = after;
      } else {
        skipReason ??= result.skipReason;
      }
    }
    const archivedEvents = original.events.filter((e) => archived.has(e.id));
    // Every stage's summariser calls were made, whichever stage's window is kept.
    const usage = usages.length === 0 ? undefined : addUsage(...usages);
    const proposed =
      archivedEvents.length === 0
        ? new CompactionResult(original.events, [], 0, skipReason ?? 'nothing-to-archive', usage)
        : new CompactionResult(window, archivedEvents, cost(original.events) - tokens, undefined, usage);
    const result = this.deferral.apply(original, proposed);
    return {
      result,
      stages,
      fits: fits(result === proposed ? tokens : cost(original.events)),
      modelCalled,
      ...(anySummarized ? { summarizedEvents: summarized } : {}),
    };
  }
}
