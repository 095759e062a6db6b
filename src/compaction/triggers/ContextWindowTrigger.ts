import { InvalidArgumentError, requirePositiveInt } from '../../errors.js';
import { calibrationRatio } from '../../tokens/calibration.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import type { CompactionRequest } from '../CompactionRequest.js';
import type { CompactionTrigger } from '../CompactionTrigger.js';
import { contextWindowOf } from '../modelContextWindows.js';

export interface ContextWindowTriggerOptions {
  /** The model's context window; or give `model` to look it up in the table (see modelContextWindows.ts). */
  contextWindowTokens?: number;
  model?: string;
  /** Extra table entries for this trigger only, e.g. `{ 'my-finetune': 32768 }`. */
  contextWindows?: Readonly<Record<string, number>>;
  /** Share of the budget at which to fire; default 0.7, which leaves room for the summary and the next reply. */
  thresholdRatio?: number;
  /** Floor: never fire below this many tokens of input, however small the window (a small window must not compact on every turn). */
  minTokens?: number;
  /** Tokens kept free for the model's reply; default 0. */
  reserveTokens?: number;
  /** Tokens of the system prompt and of the tool schemas sent with every request (not in the session). */
  systemPromptTokens?: number;
  toolSchemaTokens?: number;
  tokenCountEstimator?: TokenCountEstimator;
}

function requireNonNegativeInt(value: unknown, name: string): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new InvalidArgumentError(`${name} must be a non-negative integer`);
  }
  return value;
}

/**
 * Fires when a request would fill `thresholdRatio` of the usable context window. With a budget
 * anatomy:
 *
 *   budget    = contextWindowTokens − reserveTokens                    (room for the prompt)
 *   input     = calibrated window tokens + systemPromptTokens + toolSchemaTokens
 *   threshold = max(minTokens, thresholdRatio × budget)
 *   fires when input ≥ threshold
 *
 * The ratio adapts to the model (70 % of 128K is 89,600, of 32K 22,400); the floor keeps tiny windows from
 * compacting constantly. Window tokens are scaled by the session's calibration ratio when one is known.
 */
export class ContextWindowTrigger implements CompactionTrigger {
  static readonly DEFAULT_THRESHOLD_RATIO = 0.7;
  readonly contextWindowTokens: number;
  readonly thresholdRatio: number;
  readonly minTokens: number;
  readonly reserveTokens: number;
  readonly systemPromptTokens: number;
  readonly toolSchemaTokens: number;
  readonly tokenCountEstimator: TokenCountEstimator;

  constructor(options: ContextWindowTriggerOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    if (options.contextWindowTokens !== undefined) {
      this.contextWindowTokens = requirePositiveInt(options.contextWindowTokens, 'contextWindowTokens');
    } else if (options.model !== undefined) {
      this.contextWindowTokens = contextWindowOf(options.model, options.contextWindows ?? {});
    } else {
      throw new InvalidArgumentError('contextWindowTokens or model must be given');
    }
    const ratio = options.thresholdRatio ?? ContextWindowTrigger.DEFAULT_THRESHOLD_RATIO;
    if (typeof ratio !== 'number' || !(ratio > 0 && ratio <= 1)) {
      throw new InvalidArgumentError('thresholdRatio must be greater than 0 and at most 1');
    }
    this.thresholdRatio = ratio;
    this.minTokens = requireNonNegativeInt(options.minTokens, 'minTokens');
    this.reserveTokens = requireNonNegativeInt(options.reserveTokens, 'reserveTokens');
    this.systemPromptTokens = requireNonNegativeInt(options.systemPromptTokens, 'systemPromptTokens');
    this.toolSchemaTokens = requireNonNegativeInt(options.toolSchemaTokens, 'toolSchemaTokens');
    if (this.reserveTokens + this.systemPromptTokens + this.toolSchemaTokens >= this.contextWindowTokens) {
      throw new InvalidArgumentError(
        `reserveTokens + systemPromptTokens + toolSchemaTokens must be less than contextWindowTokens (${this.contextWindowTokens})`,
      );
    }
    if (options.tokenCountEstimator === null) throw new InvalidArgumentError('tokenCountEstimator must not be null');
    this.tokenCountEstimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
  }

  /** Input tokens at which the trigger fires. */
  get thresholdTokens(): number {
    return Math.max(this.minTokens, Math.floor(this.thresholdRatio * (this.contextWindowTokens - this.reserveTokens)));
  }

  /** Estimated prompt tokens of a request: the calibrated window plus the fixed instruction overhead. */
  inputTokens(request: CompactionRequest): number {
    const window = estimateEventsTokens(request.events, this.tokenCountEstimator) * calibrationRatio(request.session);
    return window + this.systemPromptTokens + this.toolSchemaTokens;
  }

  /** input ÷ budget: the "context pressure" (1 = the prompt fills all room left for it). */
  contextPressure(request: CompactionRequest): number {
    return this.inputTokens(request) / (this.contextWindowTokens - this.reserveTokens);
  }

  shouldCompact(request: CompactionRequest): boolean {
    return this.inputTokens(request) >= this.thresholdTokens;
  }
}
