import { InvalidArgumentError, requirePositiveInt } from '../../errors.js';
import { calibrationRatio } from '../../tokens/calibration.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import type { CompactionRequest } from '../CompactionRequest.js';
import type { CompactionTrigger } from '../CompactionTrigger.js';

export interface TokenCountTriggerOptions {
  threshold: number;
  /** Defaults to the shared js-tiktoken (o200k_base) estimator. */
  tokenCountEstimator?: TokenCountEstimator;
}

/** Fires when the whole window (synthetic events included) costs at least `threshold` tokens. */
export class TokenCountTrigger implements CompactionTrigger {
  readonly threshold: number;
  readonly tokenCountEstimator: TokenCountEstimator;

  constructor(options: TokenCountTriggerOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    this.threshold = requirePositiveInt(options.threshold, 'threshold');
    if (options.tokenCountEstimator === null) throw new InvalidArgumentError('tokenCountEstimator must not be null');
    this.tokenCountEstimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
  }

  getThreshold(): number {
    return this.threshold;
  }

  /** The estimate is scaled by the session's calibration ratio when the chat integration has learned one. */
  shouldCompact(request: CompactionRequest): boolean {
    return estimateEventsTokens(request.events, this.tokenCountEstimator) * calibrationRatio(request.session) >= this.threshold;
  }
}
