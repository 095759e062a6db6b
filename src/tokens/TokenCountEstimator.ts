/** Estimates how many model tokens a text costs. Implementations must be deterministic. */
export interface TokenCountEstimator {
  estimate(text: string): number;
}

/** One token per character: exact, dependency-free units for tests and for budgets in characters. */
export class CharacterTokenCountEstimator implements TokenCountEstimator {
  estimate(text: string): number {
    return text.length;
  }
}
