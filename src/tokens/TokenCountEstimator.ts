/** Estimates how many model tokens a text costs. Implementations must be deterministic. */
export interface TokenCountEstimator {
  estimate(text: string): number;
  /**
   * Whether events are counted with their reasoning (see `formatEvent`'s `reasoning` option). Set it when
   * reasoning is sent back to the provider, so that budgets count it and stripping it saves what it claims.
   */
  readonly countsReasoning?: boolean;
}

/** One token per character: exact, dependency-free units for tests and for budgets in characters. */
export class CharacterTokenCountEstimator implements TokenCountEstimator {
  readonly countsReasoning: boolean;

  constructor(options: { countReasoning?: boolean } = {}) {
    this.countsReasoning = options?.countReasoning === true;
  }

  estimate(text: string): number {
    return text.length;
  }
}
