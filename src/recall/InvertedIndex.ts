import { TopHits, type RankedKey } from './TopHits.js';
import { processSearchTerm, splitWords } from './searchTerms.js';

/**
 * The tie-break rank of a matching document (higher first among equal scores), or null to leave it out of the
 * results. Asked only for documents whose score could still place them in the results. It must not search an
 * index itself: the accumulators are shared by all indexes and still hold this query's scores.
 */
export type RankDocument = (key: string) => number | null;

/** BM25+ parameters (see SessionIndex for why these values). */
export interface Bm25Parameters {
  k: number;
  b: number;
  d: number;
}

/** The documents containing one term, in the order they were added (dead ones included until compaction). */
interface Posting {
  docs: number[];
  freqs: number[];
  /** Live documents in `docs`: the term's document frequency. */
  live: number;
}

/** Dead entries below which a compaction pass is not worth running (tests lower them). */
export interface CompactionFloor {
  postings: number;
  documents: number;
}

const DEFAULT_COMPACTION_FLOOR: CompactionFloor = { postings: 4096, documents: 1024 };

/**
 * A full-text index with BM25+ ranking that returns only the best `limit` documents: the scores of a query's
 * matches are summed into flat arrays and selected through a bounded heap, so no result object is built and
 * nothing is sorted but the hits returned. Its scores are minisearch 7's, bit for bit (what this replaced;
 * the recall quality figures were measured with it):
 *
 * - a document's length is the number of distinct raw tokens of its text (stop words and all), and the average
 *   length is a running mean updated on each add and removal in the same floating-point steps;
 * - idf = ln(1 + (N − df + 0.5) / (df + 0.5)); a term scores idf · (d + tf·(k+1) / (tf + k·(1 − b + b·len/avg)));
 * - a document's score is the sum over the query's terms in query order (a repeated term counts again), times
 *   the number of distinct query terms it contains.
 *
 * Removal is lazy: the document is dead at once (it stops matching and counting in N, df and the average
 * length), its posting entries are dropped by a compaction that runs once dead entries outnumber live ones
 * (and the floor). Entries held are therefore at most twice the live ones plus the floor (see `footprint`);
 * a term no live document contains is dropped at once.
 */
export class InvertedIndex {
  private readonly postings = new Map<string, Posting>();
  private readonly numbers = new Map<string, number>();
  /** By document number: the key of a live document, undefined for a dead one. */
  private keys: (string | undefined)[] = [];
  /** By document number: its length (distinct raw tokens). */
  private lengths: number[] = [];
  private averageLength = 0;
  private livePostings = 0;
  private deadPostings = 0;

  constructor(
    private readonly bm25: Bm25Parameters,
    private readonly floor: CompactionFloor = DEFAULT_COMPACTION_FLOOR,
  ) {}

  /** Live documents. */
  get size(): number {
    return this.numbers.size;
  }

  /** Entries held, dead ones included: postings ≤ 2 × live postings + floor, documents likewise. */
  get footprint(): { postings: number; livePostings: number; documents: number } {
    return { postings: this.livePostings + this.deadPostings, livePostings: this.livePostings, documents: this.keys.length };
  }

  has(key: string): boolean {
    return this.numbers.has(key);
  }

  add(key: string, text: string): void {
    if (this.numbers.has(key)) throw new Error(`document ${key} is indexed already`);
    const number = this.keys.length;
    const tokens = splitWords(text);
    const length = new Set(tokens).size;
    const count = this.numbers.size;
    this.averageLength = (this.averageLength * count + length) / (count + 1);
    this.keys.push(key);
    this.lengths.push(length);
    this.numbers.set(key, number);
    for (const [term, freq] of termFrequencies(tokens)) {
      let posting = this.postings.get(term);
      if (posting === undefined) {
        posting = { docs: [], freqs: [], live: 0 };
        this.postings.set(term, posting);
      }
      posting.docs.push(number);
      posting.freqs.push(freq);
      posting.live++;
      this.livePostings++;
    }
  }

  /** Removes a document; `text` must be the text it was added with (its terms are found from it). */
  remove(key: string, text: string): void {
    const number = this.numbers.get(key);
    if (number === undefined) return;
    const count = this.numbers.size;
    this.averageLength = count === 1 ? 0 : (this.averageLength * count - this.lengths[number]!) / (count - 1);
    this.numbers.delete(key);
    this.keys[number] = undefined;
    for (const term of termFrequencies(splitWords(text)).keys()) {
      const posting = this.postings.get(term);
      if (posting === undefined) continue;
      this.livePostings--;
      // A term no live document has is gone at once, its entries with it.
      if (--posting.live === 0) {
        this.postings.delete(term);
        this.deadPostings -= posting.docs.length - 1;
      } else this.deadPostings++;
    }
    const deadDocuments = this.keys.length - this.numbers.size;
    if (
      (this.deadPostings > this.floor.postings && this.deadPostings > this.livePostings) ||
      (deadDocuments > this.floor.documents && deadDocuments > this.numbers.size)
    )
      this.compact();
  }

  /**
   * The best `limit` documents matching any of the query's terms, best first; among equal scores the higher
   * rank first. `rank` is asked only for documents whose score reaches the current `limit`-th best.
   */
  search(query: string, limit: number, rank: RankDocument): RankedKey[] {
    if (limit <= 0 || this.numbers.size === 0) return [];
    const terms: string[] = [];
    for (const token of splitWords(query)) {
      const term = processSearchTerm(token);
      if (term) terms.push(term);
    }
    const { sums, matched, touched } = scratchFor(this.keys.length);
    let touchedCount = 0;
    const { k, b, d } = this.bm25;
    const total = this.numbers.size;
    const average = this.averageLength;
    const counted = new Set<string>();
    for (const term of terms) {
      const posting = this.postings.get(term);
      if (posting === undefined) continue;
      const distinct = !counted.has(term);
      counted.add(term);
      const df = posting.live;
      const idf = Math.log(1 + (total - df + 0.5) / (df + 0.5));
      const { docs, freqs } = posting;
      for (let i = 0; i < docs.length; i++) {
        const doc = docs[i]!;
        if (this.keys[doc] === undefined) continue;
        const tf = freqs[i]!;
        // Written as minisearch writes it: the same operations in the same order give the same float.
        const score = idf * (d + (tf * (k + 1)) / (tf + k * (1 - b + (b * this.lengths[doc]!) / average)));
        if (matched[doc] === 0) {
          touched[touchedCount++] = doc;
          sums[doc] = score;
          matched[doc] = 1;
        } else {
          sums[doc] = sums[doc]! + score;
          if (distinct) matched[doc] = matched[doc]! + 1;
        }
      }
    }
    // Scores final and the shared accumulators clean before `rank` runs caller code.
    for (let i = 0; i < touchedCount; i++) {
      const doc = touched[i]!;
      sums[doc] = sums[doc]! * matched[doc]!;
      matched[doc] = 0;
    }
    const top = new TopHits(limit);
    for (let i = 0; i < touchedCount; i++) {
      const doc = touched[i]!;
      const score = sums[doc]!;
      if (!top.admits(score)) continue;
      const key = this.keys[doc]!;
      const r = rank(key);
      if (r !== null) top.offer(key, score, r);
    }
    return top.best();
  }

  /** Drops dead documents' entries and renumbers the live documents densely (order kept). */
  private compact(): void {
    const renumbered = new Int32Array(this.keys.length);
    const keys: string[] = [];
    const lengths: number[] = [];
    for (let doc = 0; doc < this.keys.length; doc++) {
      const key = this.keys[doc];
      if (key === undefined) {
        renumbered[doc] = -1;
        continue;
      }
      renumbered[doc] = keys.length;
      this.numbers.set(key, keys.length);
      keys.push(key);
      lengths.push(this.lengths[doc]!);
    }
    for (const posting of this.postings.values()) {
      const docs: number[] = [];
      const freqs: number[] = [];
      for (let i = 0; i < posting.docs.length; i++) {
        const doc = renumbered[posting.docs[i]!]!;
        if (doc < 0) continue;
        docs.push(doc);
        freqs.push(posting.freqs[i]!);
      }
      posting.docs = docs;
      posting.freqs = freqs;
    }
    this.keys = keys;
    this.lengths = lengths;
    this.deadPostings = 0;
  }
}

/** How often each processed term occurs among `tokens`, in first-occurrence order. */
function termFrequencies(tokens: readonly string[]): Map<string, number> {
  const freqs = new Map<string, number>();
  for (const token of tokens) {
    const term = processSearchTerm(token);
    if (term) freqs.set(term, (freqs.get(term) ?? 0) + 1);
  }
  return freqs;
}

interface Scratch {
  sums: Float64Array;
  /** Distinct query terms a document contains; 0 = not touched by this query (reset as hits are read). */
  matched: Int32Array;
  touched: Int32Array;
}

/**
 * Accumulators shared by every index: a search runs to completion synchronously, so one set sized to the
 * largest index serves them all (per index, 100 indexed sessions would hold 100 such sets).
 */
let scratch: Scratch = { sums: new Float64Array(0), matched: new Int32Array(0), touched: new Int32Array(0) };

function scratchFor(documents: number): Scratch {
  if (scratch.sums.length < documents) {
    const size = Math.max(documents, scratch.sums.length * 2, 1024);
    scratch = { sums: new Float64Array(size), matched: new Int32Array(size), touched: new Int32Array(size) };
  }
  return scratch;
}
