import { BpeRankTable, INLINE_BYTES, NO_RANK, hashBytes, hashWords, word } from './BpeRankTable.js';
import { PieceCountCache } from './PieceCountCache.js';
import { type PreTokenizer, preTokenizerFor } from './preTokenizers.js';

/**
 * Pieces up to this many bytes are merged on two small arrays (a linear scan for the lowest rank per merge,
 * quadratic but tiny); longer ones on a heap, O(n log n). Both give the same result; the cut-over only
 * affects speed.
 */
export const HEAP_MERGE_MIN_BYTES = 64;

/**
 * Caches of multi-token pieces longer than 8 bytes: up to 32 bytes (long words, identifiers), and up to 256
 * (runs of CJK text between punctuation, long identifiers and numbers); longer pieces are merged each time.
 * 16,384 × 39 + 2,048 × 263 bytes = 1.2 MB.
 */
const SHORT_PIECE_BYTES = 32;
const LONG_PIECE_BYTES = 256;

/** Recent short pieces: direct-mapped, 4 ints a slot (the piece's two words, its length, its count); 128 KB. */
const RECENT_SLOTS = 1 << 13;

/** Scratch arrays up to this many elements are kept between calls; a longer piece gets arrays of its own. */
const RETAINED_SCRATCH = 1 << 16;

/**
 * Counts tokens exactly as js-tiktoken's `Tiktoken.encode(text, [], []).length` (special tokens counted as
 * plain text), in time O(n log n) in the text's length whatever the text. Pieces come from a hand-written
 * scanner equivalent to the encoding's pattern; a piece that is one token costs one lookup; others are
 * merged lowest rank first, leftmost on ties, as js-tiktoken does. Recent pieces and their counts are kept
 * in fixed-size caches.
 *
 * Memory, fixed: the rank table (BpeRankTable) and 1.3 MB of piece caches. Transient: about 25 bytes per
 * byte of the longest piece being merged (at most 40), of which up to RETAINED_SCRATCH elements (~1.6 MB)
 * are kept for the next call.
 */
export class BpeTokenCounter {
  private readonly preTokenizer: PreTokenizer | null;
  private readonly pattern: RegExp;
  private readonly pairRanks: Int32Array;
  private readonly maxTokenBytes: number;

  private bytes = new Uint8Array(1024);
  /** Bytes written by the last encode(). */
  private byteCount = 0;
  // Small merges: part i starts at partStarts[i]; partRanks[i] is the rank of part i merged with part i + 1.
  private partStarts = new Int32Array(HEAP_MERGE_MIN_BYTES + 1);
  private partRanks = new Int32Array(HEAP_MERGE_MIN_BYTES + 1);
  // Heap merges, indexed by the byte where a part starts.
  private nextPart = new Int32Array(0);
  private previousPart = new Int32Array(0);
  private pairRank = new Int32Array(0);
  private heap = new Float64Array(0);

  private readonly recentPieces = new Int32Array(RECENT_SLOTS * 4);
  private readonly shortPieces = new PieceCountCache(1 << 14, SHORT_PIECE_BYTES);
  private readonly longPieces = new PieceCountCache(1 << 11, LONG_PIECE_BYTES);

  /** Pieces of at least this many bytes are merged on the heap. */
  private readonly heapMergeMinBytes: number;

  /** `heapMergeMinBytes` lowers the cut-over to the heap merge (tests run both merges on short pieces). */
  constructor(
    private readonly table: BpeRankTable,
    pattern: string,
    options: { heapMergeMinBytes?: number } = {},
  ) {
    this.heapMergeMinBytes = Math.max(2, Math.min(options.heapMergeMinBytes ?? HEAP_MERGE_MIN_BYTES, HEAP_MERGE_MIN_BYTES));
    this.preTokenizer = preTokenizerFor(pattern);
    this.pattern = new RegExp(pattern, 'gu');
    this.pairRanks = table.pairRanks;
    this.maxTokenBytes = table.maxTokenBytes;
  }

  count(text: string): number {
    let total = 0;
    const preTokenizer = this.preTokenizer;
    if (preTokenizer === null) {
      // A pattern without a scanner (a future js-tiktoken's): its regex gives the pieces.
      this.pattern.lastIndex = 0;
      for (const match of text.matchAll(this.pattern)) {
        total += this.countPiece(text, match.index, match.index + match[0].length);
      }
      return total;
    }
    const length = text.length;
    for (let start = 0; start < length;) {
      const end = preTokenizer(text, start);
      // One ASCII character is always one token (every byte is).
      total += end - start === 1 && text.charCodeAt(start) < 0x80 ? 1 : this.countPiece(text, start, end);
      start = end;
    }
    return total;
  }

  /** Drops every cached piece (benchmarks measure cold and warm runs). */
  clearCache(): void {
    this.shortPieces.clear();
    this.longPieces.clear();
    this.recentPieces.fill(0);
  }

  private countPiece(text: string, start: number, end: number): number {
    const bytes = this.encode(text, start, end);
    const n = this.byteCount;
    if (n <= 1) return n;
    if (n === 2) return this.pairRanks[(bytes[0]! << 8) | bytes[1]!]! === NO_RANK ? 2 : 1;
    if (n <= INLINE_BYTES) return this.countShortPiece(bytes, n);
    const hash = hashBytes(bytes, 0, n);
    if (n <= this.maxTokenBytes && this.table.rankWithHash(bytes, 0, n, hash) !== NO_RANK) return 1;
    const cache = n <= SHORT_PIECE_BYTES ? this.shortPieces : n <= LONG_PIECE_BYTES ? this.longPieces : null;
    const cached = cache === null ? -1 : cache.get(bytes, n, hash);
    if (cached >= 0) return cached;
    const count = n < this.heapMergeMinBytes ? this.mergeSmall(bytes, n) : this.mergeLarge(bytes, n);
    cache?.set(bytes, n, hash, count);
    return count;
  }

  /**
   * A piece of 3–8 bytes — most words and symbols — through a small cache of recent such pieces and their
   * counts, hits or not: it fits in the CPU's cache where the rank table does not, and words repeat.
   */
  private countShortPiece(bytes: Uint8Array, n: number): number {
    const first = word(bytes, 0, Math.min(n, 4));
    const second = n > 4 ? word(bytes, 4, n) : 0;
    const hash = hashWords(first, second, n);
    const recent = this.recentPieces;
    const at = (hash & (RECENT_SLOTS - 1)) * 4;
    if (recent[at] === first && recent[at + 1] === second && recent[at + 2] === n) return recent[at + 3]!;
    let count = 1;
    if (this.table.rankOfWords(first, second, n, hash) === NO_RANK) {
      count = n < this.heapMergeMinBytes ? this.mergeSmall(bytes, n) : this.mergeLarge(bytes, n);
    }
    recent[at] = first;
    recent[at + 1] = second;
    recent[at + 2] = n;
    recent[at + 3] = count;
    return count;
  }

  /** UTF-8 of text[start .. end) into a scratch array (its length in byteCount); unpaired surrogates become U+FFFD, as TextEncoder does. */
  private encode(text: string, start: number, end: number): Uint8Array {
    const need = (end - start) * 3;
    let bytes = this.bytes;
    if (bytes.length < need) {
      bytes = new Uint8Array(need);
      if (need <= RETAINED_SCRATCH) this.bytes = bytes;
    }
    let n = 0;
    for (let i = start; i < end; i++) {
      const unit = text.charCodeAt(i);
      if (unit < 0x80) {
        bytes[n++] = unit;
      } else if (unit < 0x800) {
        bytes[n++] = 0xc0 | (unit >> 6);
        bytes[n++] = 0x80 | (unit & 0x3f);
      } else if (unit < 0xd800 || unit > 0xdfff) {
        bytes[n++] = 0xe0 | (unit >> 12);
        bytes[n++] = 0x80 | ((unit >> 6) & 0x3f);
        bytes[n++] = 0x80 | (unit & 0x3f);
      } else {
        const low = i + 1 < end ? text.charCodeAt(i + 1) : 0;
        if (unit <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
          const codePoint = (unit - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
          bytes[n++] = 0xf0 | (codePoint >> 18);
          bytes[n++] = 0x80 | ((codePoint >> 12) & 0x3f);
          bytes[n++] = 0x80 | ((codePoint >> 6) & 0x3f);
          bytes[n++] = 0x80 | (codePoint & 0x3f);
          i++;
        } else {
          bytes[n++] = 0xef;
          bytes[n++] = 0xbf;
          bytes[n++] = 0xbd;
        }
      }
    }
    this.byteCount = n;
    return bytes;
  }

  /** Byte-pair merge of bytes[0 .. n) on two arrays; returns the number of tokens. */
  private mergeSmall(bytes: Uint8Array, n: number): number {
    const starts = this.partStarts;
    const ranks = this.partRanks;
    const table = this.table;
    for (let i = 0; i < n - 1; i++) {
      starts[i] = i;
      ranks[i] = this.pairRanks[(bytes[i]! << 8) | bytes[i + 1]!]!;
    }
    starts[n - 1] = n - 1;
    ranks[n - 1] = NO_RANK;
    starts[n] = n;
    let parts = n;
    for (;;) {
      let best = 0;
      let bestRank = ranks[0]!;
      for (let i = 1; i < parts - 1; i++) {
        if (ranks[i]! < bestRank) {
          bestRank = ranks[i]!;
          best = i;
        }
      }
      if (bestRank === NO_RANK) return parts;
      // Part `best` absorbs part best + 1; only the pairs on either side of it change.
      ranks[best] = best + 3 <= parts ? table.rank(bytes, starts[best]!, starts[best + 3]!) : NO_RANK;
      if (best > 0) ranks[best - 1] = table.rank(bytes, starts[best - 1]!, starts[best + 2]!);
      for (let i = best + 1; i < parts; i++) {
        starts[i] = starts[i + 1]!;
        ranks[i] = ranks[i + 1]!;
      }
      parts--;
      if (parts === 1) return 1;
    }
  }

  /**
   * The same merge for long pieces (a run of one letter, a minified line, base64): parts as a linked list
   * indexed by the byte where a part starts, candidate pairs in a binary min-heap keyed by rank × 2³² +
   * position, so the leftmost pair wins a tie as in the linear scan. A pair whose part has since changed
   * is skipped when it surfaces: a part's pair only ever grows, and a rank names one byte sequence, so an
   * entry is current exactly when its rank is still the part's. Each merge costs O(log n) and re-ranks two
   * pairs; a pair longer than the longest token is rejected without hashing.
   */
  private mergeLarge(bytes: Uint8Array, n: number): number {
    if (this.nextPart.length < n) {
      this.nextPart = new Int32Array(n);
      this.previousPart = new Int32Array(n);
      this.pairRank = new Int32Array(n);
    }
    if (this.heap.length < n) this.heap = new Float64Array(n + (n >> 1));
    const next = this.nextPart;
    const previous = this.previousPart;
    const rank = this.pairRank;
    const table = this.table;
    let heap = this.heap;
    let size = 0;
    for (let i = 0; i < n; i++) {
      next[i] = i + 1;
      previous[i] = i - 1;
      const r = i < n - 1 ? this.pairRanks[(bytes[i]! << 8) | bytes[i + 1]!]! : NO_RANK;
      rank[i] = r;
      if (r !== NO_RANK) heap[size++] = r * POSITIONS + i;
    }
    for (let i = (size - 2) >> 2; i >= 0; i--) siftDown(heap, size, i);
    let parts = n;
    while (size > 0) {
      const key = heap[0]!;
      heap[0] = heap[--size]!;
      siftDown(heap, size, 0);
      const r = Math.floor(key / POSITIONS);
      const left = key - r * POSITIONS;
      if (rank[left] !== r) continue;
      const right = next[left]!;
      const after = next[right]!;
      next[left] = after;
      if (after < n) previous[after] = left;
      rank[right] = NO_RANK;
      parts--;
      if (size + 2 > heap.length) {
        const grown = new Float64Array(heap.length * 2);
        grown.set(heap);
        heap = this.heap = grown;
      }
      const merged = after < n ? table.rank(bytes, left, next[after]!) : NO_RANK;
      rank[left] = merged;
      if (merged !== NO_RANK) size = siftUp(heap, size, merged * POSITIONS + left);
      const before = previous[left]!;
      if (before >= 0) {
        const joined = table.rank(bytes, before, after);
        if (joined !== rank[before]) {
          rank[before] = joined;
          if (joined !== NO_RANK) size = siftUp(heap, size, joined * POSITIONS + before);
        }
      }
    }
    if (n > RETAINED_SCRATCH) {
      this.nextPart = this.previousPart = this.pairRank = new Int32Array(0);
      this.heap = new Float64Array(0);
    }
    return parts;
  }
}

/** Heap keys are rank × POSITIONS + position: exact in a double for ranks < 2²¹ and pieces < 4 GB. */
const POSITIONS = 2 ** 32;

/** Adds `key` to the heap of `size` keys; returns the new size. A 4-ary heap: half the depth of a binary one. */
function siftUp(heap: Float64Array, size: number, key: number): number {
  let i = size;
  while (i > 0) {
    const parent = (i - 1) >> 2;
    const above = heap[parent]!;
    if (above <= key) break;
    heap[i] = above;
    i = parent;
  }
  heap[i] = key;
  return size + 1;
}

function siftDown(heap: Float64Array, size: number, from: number): void {
  const key = heap[from]!;
  let i = from;
  for (;;) {
    const first = 4 * i + 1;
    if (first >= size) break;
    let child = first;
    let smallest = heap[first]!;
    const last = Math.min(first + 4, size);
    for (let c = first + 1; c < last; c++) {
      const k = heap[c]!;
      if (k < smallest) {
        smallest = k;
        child = c;
      }
    }
    if (smallest >= key) break;
    heap[i] = smallest;
    i = child;
  }
  heap[i] = key;
}
