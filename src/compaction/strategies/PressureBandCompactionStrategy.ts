import { InvalidArgumentError } from '../../errors.js';
import { requireRequest, type CompactionRequest } from '../CompactionRequest.js';
import type { CompactionResult } from '../CompactionResult.js';
import {
  toCompactionStrategy,
  type CompactionStrategy,
  type CompactionStrategyLike,
  type StrategyPreview,
} from '../CompactionStrategy.js';
import { ContextWindowTrigger, type ContextWindowTriggerOptions } from '../triggers/ContextWindowTrigger.js';
import { CompactionPipeline, type PipelineRun } from './CompactionPipeline.js';
import { ContentPolicyCompactionStrategy } from './ContentPolicyCompactionStrategy.js';
import { ObservationMaskingCompactionStrategy } from './ObservationMaskingCompactionStrategy.js';
import type { RewriteDeferralOptions } from './rewriteDeferral.js';
import { TokenCountCompactionStrategy } from './TokenCountCompactionStrategy.js';

/** One graduated measure: from `threshold` context pressure on, `strategy` is applied. */
export interface PressureBand {
  /** Context pressure (prompt input ÷ usable window, see ContextWindowTrigger.contextPressure), in (0, 1]. */
  threshold: number;
  /** Shown in the stage report and the preview, e.g. 'mask'. */
  name: string;
  strategy: CompactionStrategyLike;
}

export interface PressureBandCompactionStrategyOptions
  extends Omit<ContextWindowTriggerOptions, 'thresholdRatio'>, RewriteDeferralOptions {
  /** In ascending threshold order; default: mask 0.80, strip 0.85, summarise 0.90 (with `summarizer`), truncate 0.99. */
  bands?: readonly PressureBand[];
  /** The summarising strategy of the default 0.90 band; without it the default bands do not summarise. */
  summarizer?: CompactionStrategyLike;
  /** The default emergency truncation keeps the window under this pressure; default 0.7 (at most the first band). */
  emergencyTargetRatio?: number;
  /** Other thresholds for the default bands (e.g. from a configuration file); ignored with `bands`. */
  thresholds?: Partial<PressureThresholds>;
}

export interface PressureThresholds {
  mask: number;
  strip: number;
  summarize: number;
  truncate: number;
}

/** The default thresholds: mask early and cheaply, summarise later, cut mechanically only near the limit. */
export const DEFAULT_PRESSURE_THRESHOLDS: Readonly<PressureThresholds> = Object.freeze({
  mask: 0.8,
  strip: 0.85,
  summarize: 0.9,
  truncate: 0.99,
});

function requireBands(value: unknown): PressureBand[] {
  if (!Array.isArray(value) || value.length === 0) throw new InvalidArgumentError('bands must not be empty');
  const names = new Set<string>();
  return value.map((band: unknown, i) => {
    if (band === null || typeof band !== 'object') throw new InvalidArgumentError(`bands[${i}] must be an object`);
    const { threshold, name, strategy } = band as Partial<PressureBand>;
    if (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1)) {
      throw new InvalidArgumentError(`bands[${i}].threshold must be a number in (0, 1] (got ${JSON.stringify(threshold)})`);
    }
    const previous = (value[i - 1] as PressureBand | undefined)?.threshold;
    if (previous !== undefined && !(threshold > previous)) {
      throw new InvalidArgumentError(
        `bands[${i}].threshold (${threshold}) must be greater than bands[${i - 1}].threshold (${previous}): bands are in ascending order`,
      );
    }
    if (typeof name !== 'string' || name.trim() === '') throw new InvalidArgumentError(`bands[${i}].name must not be blank`);
    if (names.has(name)) throw new InvalidArgumentError(`bands[${i}].name '${name}' is used by another band`);
    names.add(name);
    let checked: CompactionStrategy;
    try {
      checked = toCompactionStrategy(strategy as CompactionStrategyLike);
    } catch {
      throw new InvalidArgumentError(`bands[${i}].strategy must be a strategy or a function`);
    }
    return Object.freeze({ threshold, name, strategy: checked });
  });
}

/**
 * Pressure bands (graduated measures): the higher the context pressure, the harsher the measure.
 * Each band runs only while the pressure is still at or above its threshold after the milder bands ran, so
 * at 82 % only consumed tool output is masked, and truncation happens only when nothing else brought the
 * window under 99 %. Below the first band nothing changes. Built on CompactionPipeline (the bands are its
 * stages, the report names them) and on ContextWindowTrigger's pressure (calibration and instruction
 * overhead included); `trigger` fires at the first band.
 *
 * Cache-aware (`minSavedTokens`, see CompactionPipeline): while the milder bands would only mask or strip a few
 * tokens in place, the window is left as it is and the pressure keeps rising, until a batch is worth rewriting
 * the cached prefix, the cache has expired, or a harsher band cuts anyway.
 */
export class PressureBandCompactionStrategy implements CompactionStrategy {
  readonly bands: readonly Readonly<PressureBand>[];
  /** Fires at the first band's pressure; measures the pressure for the bands too. */
  readonly trigger: ContextWindowTrigger;
  private readonly pipeline: CompactionPipeline;

  constructor(options: PressureBandCompactionStrategyOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    const { bands, summarizer, emergencyTargetRatio, thresholds, minSavedTokens, cacheTtlMs, now, ...window } = options;
    // The pressure arithmetic (window, reserve, overhead, calibration) is ContextWindowTrigger's, validated there.
    const probe = new ContextWindowTrigger({ ...window, thresholdRatio: DEFAULT_PRESSURE_THRESHOLDS.mask });
    const budget = probe.contextWindowTokens - probe.reserveTokens;
    const overhead = probe.systemPromptTokens + probe.toolSchemaTokens;
    const windowTokensAt = (pressure: number) => Math.max(0, Math.ceil(pressure * budget - overhead));
    this.bands = Object.freeze(
      requireBands(
        bands ??
          this.defaultBands(windowTokensAt, summarizer, emergencyTargetRatio, probe, {
            ...DEFAULT_PRESSURE_THRESHOLDS,
            ...thresholds,
          }),
      ),
    );
    this.trigger = new ContextWindowTrigger({ ...window, thresholdRatio: this.bands[0]!.threshold });
    this.pipeline = new CompactionPipeline({
      stages: this.bands.map((b) => ({ strategy: b.strategy, name: b.name, minTokens: windowTokensAt(b.threshold) })),
      // Done as soon as the pressure is below the first band.
      maxTokens: Math.max(1, windowTokensAt(this.bands[0]!.threshold) - 1),
      tokenCountEstimator: probe.tokenCountEstimator,
      // Masking and stripping bands rewrite in place: in steps, when the pipeline is cache-aware.
      ...(minSavedTokens !== undefined ? { minSavedTokens } : {}),
      ...(cacheTtlMs !== undefined ? { cacheTtlMs } : {}),
      ...(now !== undefined ? { now } : {}),
    });
  }

  private defaultBands(
    windowTokensAt: (pressure: number) => number,
    summarizer: CompactionStrategyLike | undefined,
    emergencyTargetRatio: number | undefined,
    probe: ContextWindowTrigger,
    t: PressureThresholds,
  ): PressureBand[] {
    const target = emergencyTargetRatio ?? Math.min(ContextWindowTrigger.DEFAULT_THRESHOLD_RATIO, t.mask);
    if (typeof target !== 'number' || !(target > 0 && target <= Math.min(1, t.mask))) {
      throw new InvalidArgumentError(`emergencyTargetRatio must be a number in (0, ${t.mask}] (got ${JSON.stringify(target)})`);
    }
    const estimator = { tokenCountEstimator: probe.tokenCountEstimator };
    return [
      { threshold: t.mask, name: 'mask', strategy: new ObservationMaskingCompactionStrategy(estimator) },
      {
        threshold: t.strip,
        name: 'strip',
        strategy: new ContentPolicyCompactionStrategy({
          ...estimator,
          reasoning: 'strip',
          toolCalls: { request: 'strip', response: 'keep' },
        }),
      },
      ...(summarizer !== undefined ? [{ threshold: t.summarize, name: 'summarize', strategy: summarizer }] : []),
      {
        threshold: t.truncate,
        name: 'truncate',
        strategy: new TokenCountCompactionStrategy({ ...estimator, maxTokens: Math.max(1, windowTokensAt(target)) }),
      },
    ];
  }

  /** The request's context pressure, as the bands see it. */
  pressureOf(request: CompactionRequest): number {
    return this.trigger.contextPressure(requireRequest(request));
  }

  async compact(request: CompactionRequest): Promise<CompactionResult> {
    return this.pipeline.compact(request);
  }

  /** The bands previewed (summarisers without their model); `stages` says which bands ran. */
  async preview(request: CompactionRequest): Promise<StrategyPreview> {
    return this.pipeline.preview(request);
  }

  /** `compact` (or, with `preview`, the dry run) with the report of the bands that ran, tokens before/after each. */
  async run(request: CompactionRequest, preview = false): Promise<PipelineRun> {
    return this.pipeline.run(request, preview);
  }
}
