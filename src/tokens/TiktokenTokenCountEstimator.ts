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

/**
 * Whether `estimator` counts a text cut after a line break as the sum of its parts — `estimate(a + '\n' + b)`
 * equals `estimate(a + '\n') + estimate(b)` whenever `b` startsApartFromLineBreak — so that a text of many lines
 * can be counted from its lines' memoised counts. True for this module's own o200k_base and cl100k_base estimators
 * only (not a subclass, nor an instance whose `estimate` was replaced): in their pre-tokenising patterns a line
 * break belongs to a piece of whitespace ending in line breaks (`\s*[\r\n]+`) or of punctuation followed by line
 * breaks (`[^\s\p{L}\p{N}]+[\r\n/]*`, cl100k_base without the slash), neither of which can take a character that is
 * neither whitespace nor a slash; no other alternative matches a line break, no alternative looks behind, and BPE
 * merges within a piece only. (Not claimed for r50k_base, whose `\s+(?!\S)` splits a line's trailing spaces otherwise when such a character follows.)
 */
export function countsApartAtLineBreaks(estimator: TokenCountEstimator): boolean {
  return (
    estimator instanceof TiktokenTokenCountEstimator &&
    Object.getPrototypeOf(estimator) === TiktokenTokenCountEstimator.prototype &&
    !Object.prototype.hasOwnProperty.call(estimator, 'estimate') &&
    (estimator.encoding === 'o200k_base' || estimator.encoding === 'cl100k_base')
  );
}

/** Whether `line` may follow a line break without changing how the text before it is counted (countsApartAtLineBreaks). */
export function startsApartFromLineBreak(line: string): boolean {
  return line.length > 0 && !/^[\s/]/.test(line);
}
