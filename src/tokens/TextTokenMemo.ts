import type { TokenCountEstimator } from './TokenCountEstimator.js';

/** How much a TextTokenMemo keeps per estimator before it starts over. */
export interface TextTokenMemoLimits {
  /** Texts kept at most. */
  entries: number;
  /** Characters of those texts at most (two bytes a character in memory). */
  chars: number;
}

interface Counts {
  counts: Map<string, number>;
  chars: number;
}

/**
 * Token counts kept by text, per estimator, across calls: the same text is tokenised once while it is kept. Bounded by
 * entries and characters, and cleared whole when a new text would pass either bound: recent texts are the likely
 * repeats, and a clear costs counting them once more. Callers decide which texts are short enough to keep.
 */
export class TextTokenMemo {
  private readonly byEstimator = new WeakMap<TokenCountEstimator, Counts>();

  constructor(private readonly limits: TextTokenMemoLimits) {}

  /** The count kept for `text`, if any. */
  get(estimator: TokenCountEstimator, text: string): number | undefined {
    return this.byEstimator.get(estimator)?.counts.get(text);
  }

  /** Keeps `tokens` as the count of `text` (starting over first when it would pass a bound); returns `tokens`. */
  set(estimator: TokenCountEstimator, text: string, tokens: number): number {
    let memo = this.byEstimator.get(estimator);
    if (memo === undefined) this.byEstimator.set(estimator, (memo = { counts: new Map(), chars: 0 }));
    if (memo.counts.size >= this.limits.entries || memo.chars + text.length > this.limits.chars) {
      memo.counts.clear();
      memo.chars = 0;
    }
    memo.counts.set(text, tokens);
    memo.chars += text.length;
    return tokens;
  }
}
