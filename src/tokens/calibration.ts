import type { SessionLike } from '../session/Session.js';

/** Session metadata key holding the provider/estimate token ratio learned from real usage reports. */
export const METADATA_TOKEN_CALIBRATION = 'tokenCalibration';

export interface TokenCalibration {
  /** provider-reported prompt tokens ÷ local estimate, smoothed. */
  ratio: number;
  samples: number;
  /**
   * The highest ratio a provider's context-overflow refusal measured (the length it said the refused prompt
   * had ÷ our estimate of it): usage samples never average the ratio below it, since the window check is
   * what a refusal is about. Absent until a refusal stated a length.
   */
  floor?: number;
}

/** Ratios outside this band are treated as measurement noise (e.g. a prompt dominated by tool schemas). */
const MIN_RATIO = 0.5;
const MAX_RATIO = 2;

/** The calibration ratio stored on a session, or 1 when none (or an implausible one) is present. */
export function calibrationRatio(session: SessionLike | null | undefined): number {
  return plausibleRatio(session?.metadata?.[METADATA_TOKEN_CALIBRATION] as Partial<TokenCalibration> | undefined);
}

const plausible = (r: unknown): r is number => typeof r === 'number' && Number.isFinite(r) && r >= MIN_RATIO && r <= MAX_RATIO;

function plausibleRatio(c: Partial<TokenCalibration> | undefined): number {
  const ratio = plausible(c?.ratio) ? c.ratio : 1;
  return plausible(c?.floor) ? Math.max(ratio, c.floor) : ratio;
}

/**
 * Folds one observation (provider prompt tokens vs our estimate of the same prompt) into a running mean,
 * so one odd request cannot swing the triggers.
 */
export function updateCalibration(
  previous: TokenCalibration | undefined,
  providerTokens: number,
  estimatedTokens: number,
): TokenCalibration {
  if (!(providerTokens > 0) || !(estimatedTokens > 0)) return previous ?? { ratio: 1, samples: 0 };
  const observed = Math.min(MAX_RATIO, Math.max(MIN_RATIO, providerTokens / estimatedTokens));
  const samples = (previous?.samples ?? 0) + 1;
  const weight = 1 / Math.min(samples, 20);
  const averaged = previous === undefined ? observed : previous.ratio + (observed - previous.ratio) * weight;
  const floor = plausible(previous?.floor) ? previous.floor : undefined;
  return floor === undefined ? { ratio: averaged, samples } : { ratio: Math.max(averaged, floor), samples, floor };
}

/**
 * Folds in a ratio measured from a refusal (the provider said how long a prompt it refused was): an overflow
 * proves the estimate too low, so the ratio rises at once to the measured one instead of being averaged in —
 * the next turns are compacted early enough — and never falls here.
 */
export function raiseCalibration(
  previous: TokenCalibration | undefined,
  providerTokens: number,
  estimatedTokens: number,
): TokenCalibration {
  if (!(providerTokens > 0) || !(estimatedTokens > 0)) return previous ?? { ratio: 1, samples: 0 };
  const observed = Math.min(MAX_RATIO, Math.max(MIN_RATIO, providerTokens / estimatedTokens));
  const current = plausibleRatio(previous);
  const floor = Math.max(plausible(previous?.floor) ? previous.floor : MIN_RATIO, observed);
  return { ratio: Math.max(current, observed), samples: (previous?.samples ?? 0) + 1, floor };
}
