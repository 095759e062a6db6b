import type { TiktokenBPE } from 'js-tiktoken/lite';
import { createRequire } from 'node:module';
import { InvalidArgumentError } from '../errors.js';
import { BpeRankTable } from './BpeRankTable.js';
import { BpeTokenCounter } from './BpeTokenCounter.js';
import type { TokenCountEstimator } from './TokenCountEstimator.js';

export type TiktokenEncodingName = 'o200k_base' | 'cl100k_base' | 'p50k_base' | 'r50k_base' | 'gpt2';

const ENCODINGS: readonly TiktokenEncodingName[] = ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base', 'gpt2'];

export interface TiktokenTokenCountEstimatorOptions {
  encoding?: TiktokenEncodingName;
  /** Count assistant reasoning too (when it is sent back to the provider); default false. */
  countReasoning?: boolean;
}

const require = createRequire(import.meta.url);

/** One counter per encoding per process: loading a rank table takes ~0.1 s and ~10 MB (o200k_base). */
const counters = new Map<TiktokenEncodingName, BpeTokenCounter>();

/** The shared counter of an encoding (internal: benchmarks clear its caches between runs). */
export function counterFor(encoding: TiktokenEncodingName): BpeTokenCounter {
  let counter = counters.get(encoding);
  if (counter === undefined) {
    // Loaded synchronously on first use so that estimate() can stay synchronous (TokenCountEstimator.estimate is synchronous).
    const ranks = require(`js-tiktoken/ranks/${encoding}`) as TiktokenBPE | { default: TiktokenBPE };
    const bpe = 'default' in ranks ? ranks.default : ranks;
    counter = new BpeTokenCounter(BpeRankTable.fromTiktoken(bpe), bpe.pat_str);
    counters.set(encoding, counter);
  }
  return counter;
}

/**
 * Token estimates with OpenAI's BPE encodings (default `o200k_base`, used by GPT-4o and later).
 * The rank table loads lazily on the first estimate and is shared by every estimator of that encoding.
 * Counts equal js-tiktoken's `encode(text, [], []).length` for every text, and cost O(n log n) in the
 * text's length whatever the text (js-tiktoken's is quadratic in the longest run without whitespace).
 */
export class TiktokenTokenCountEstimator implements TokenCountEstimator {
  readonly encoding: TiktokenEncodingName;
  readonly countsReasoning: boolean;

  constructor(options: TiktokenTokenCountEstimatorOptions = {}) {
    this.countsReasoning = options.countReasoning === true;
    const encoding = options.encoding ?? 'o200k_base';
    if (!ENCODINGS.includes(encoding)) {
      throw new InvalidArgumentError(`encoding must be one of ${ENCODINGS.join(', ')}`);
    }
    this.encoding = encoding;
  }

  estimate(text: string): number {
    if (typeof text !== 'string') throw new InvalidArgumentError('text must not be null');
    return counterFor(this.encoding).count(text);
  }
}

let shared: TiktokenTokenCountEstimator | undefined;

/** The process-wide default estimator (o200k_base), used when no estimator is configured. */
export function defaultTokenCountEstimator(): TiktokenTokenCountEstimator {
  shared ??= new TiktokenTokenCountEstimator();
  return shared;
}
