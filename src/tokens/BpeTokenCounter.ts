import type { Tiktoken } from 'js-tiktoken/lite';
import { TextEncoder } from 'node:util';

/**
 * Longest pre-tokenised piece given to BPE in one go. BPE is quadratic in piece length (js-tiktoken
 * takes seconds on a 10 KB run of one letter); cutting longer pieces into chunks of this size bounds the
 * cost per character. The price: a merge that would have spanned a cut cannot happen, so each cut can add
 * about one token — under 1% for a 256-character chunk, and only on runs without whitespace or punctuation.
 */
export const MAX_PIECE_CHARS = 256;

const PIECE_CACHE_SIZE = 50_000;

/**
 * Counts tokens exactly as `Tiktoken.encode(text, [], []).length` (special tokens counted as plain text)
 * for every piece up to MAX_PIECE_CHARS. It reads js-tiktoken's rank table and runs its own merge loop,
 * which recomputes only the two pairs next to each merge instead of every pair, and it caches pieces.
 */
export class BpeTokenCounter {
  private readonly encoder = new TextEncoder();
  private readonly pieceCache = new Map<string, number>();
  private readonly rankMap: Map<string, number> | null;

  constructor(
    private readonly tiktoken: Tiktoken,
    private readonly patStr: string,
  ) {
    // rankMap is js-tiktoken's (internal) byte-sequence → rank table. If a future version hides it,
    // we fall back to its public encode(), which is exact but slower.
    const candidate = (tiktoken as unknown as { rankMap?: unknown }).rankMap;
    this.rankMap = candidate instanceof Map ? (candidate as Map<string, number>) : null;
  }

  count(text: string): number {
    if (text.length === 0) return 0;
    let total = 0;
    // The same pre-tokeniser as js-tiktoken: pieces never merge across its boundaries.
    for (const match of text.matchAll(new RegExp(this.patStr, 'gu'))) total += this.countPiece(match[0]);
    return total;
  }

  private countPiece(piece: string): number {
    if (piece.length <= MAX_PIECE_CHARS) return this.countChunk(piece);
    let total = 0;
    let start = 0;
    while (start < piece.length) {
      let end = Math.min(start + MAX_PIECE_CHARS, piece.length);
      // Never split a surrogate pair: half a character would be encoded as U+FFFD.
      const code = piece.charCodeAt(end - 1);
      if (end < piece.length && code >= 0xd800 && code <= 0xdbff) end--;
      total += this.countChunk(piece.slice(start, end));
      start = end;
    }
    return total;
  }

  private countChunk(chunk: string): number {
    if (this.rankMap === null) return this.tiktoken.encode(chunk, [], []).length;
    const cached = this.pieceCache.get(chunk);
    if (cached !== undefined) return cached;
    const bytes = utf8(chunk, this.encoder);
    // Most prose pieces are one token: a single lookup, not worth a cache entry.
    if (bytes.length <= 1 || this.rankMap.has(key(bytes, 0, bytes.length))) return bytes.length === 0 ? 0 : 1;
    const n = this.mergeCount(bytes);
    // Clearing when full is cheaper than LRU bookkeeping on this hot path and bounds memory alike.
    if (this.pieceCache.size >= PIECE_CACHE_SIZE) this.pieceCache.clear();
    this.pieceCache.set(chunk, n);
    return n;
  }

  /** Byte-pair merge (lowest rank first, leftmost on ties, as js-tiktoken) returning the number of parts. */
  private mergeCount(bytes: ArrayLike<number>): number {
    const ranks = this.rankMap as Map<string, number>;
    const n = bytes.length;
    // partKey[i] is part i's rank-table key, so a pair's key is one concatenation away.
    const partKey: string[] = new Array<string>(n);
    for (let i = 0; i < n; i++) partKey[i] = BYTE_STRINGS[bytes[i]!]!;
    // pairRank[i] is the rank of part i merged with part i + 1.
    const pairRank: number[] = new Array<number>(n - 1);
    for (let i = 0; i < n - 1; i++) pairRank[i] = ranks.get(partKey[i] + ',' + partKey[i + 1]) ?? Infinity;
    let parts = n;
    while (parts > 1) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i < parts - 1; i++) {
        const r = pairRank[i]!;
        if (r < bestRank) {
          bestRank = r;
          best = i;
        }
      }
      if (best < 0) break;
      partKey[best] = partKey[best] + ',' + partKey[best + 1];
      partKey.splice(best + 1, 1);
      pairRank.splice(best, 1);
      parts--;
      if (best < parts - 1) pairRank[best] = ranks.get(partKey[best] + ',' + partKey[best + 1]) ?? Infinity;
      if (best > 0) pairRank[best - 1] = ranks.get(partKey[best - 1] + ',' + partKey[best]) ?? Infinity;
    }
    return parts;
  }
}

const BYTE_STRINGS: readonly string[] = Array.from({ length: 256 }, (_, i) => String(i));

/** UTF-8 bytes; ASCII (most code, logs and base64) skips the TextEncoder allocation. */
function utf8(text: string, encoder: TextEncoder): ArrayLike<number> {
  const codes: number[] = new Array<number>(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return encoder.encode(text);
    codes[i] = c;
  }
  return codes;
}

/** js-tiktoken keys its rank table by the byte values joined with commas. */
function key(bytes: ArrayLike<number>, start: number, end: number): string {
  let k = BYTE_STRINGS[bytes[start]!]!;
  for (let i = start + 1; i < end; i++) k += ',' + BYTE_STRINGS[bytes[i]!]!;
  return k;
}
