import type { TiktokenBPE } from 'js-tiktoken/lite';
import { IllegalStateError } from '../errors.js';

/** Rank of a byte sequence that is not a token. Larger than every rank, so the merge loops need no special case. */
export const NO_RANK = 0x7fffffff;

/**
 * An encoding's tokens (byte sequences) and their ranks, looked up by a span of a byte array without
 * building a string key. js-tiktoken keys its table by the bytes joined with commas ("104,101,108"), which
 * costs an allocation per lookup and ~100 MB for o200k_base. Here a lookup allocates nothing and usually
 * touches one cache line: open addressing with linear probing over 16-byte entries holding the key's hash,
 * the token's bytes inline when it has at most 8 (99 % of lookups), and its rank and length. o200k_base
 * takes 8 MB of entries plus 1.4 MB of token bytes.
 */
export class BpeRankTable {
  /** Length in bytes of the longest token: a longer span is never a token. */
  readonly maxTokenBytes: number;
  /** Rank of each two-byte token by `first << 8 | second`; the commonest lookup is a single read. */
  readonly pairRanks: Int32Array;
  /** Tokens longer than 8 bytes, compared here (their entry holds their offset). */
  private readonly longTokenBytes: Uint8Array;
  /** Per slot: hash, first 4 bytes (or offset in longTokenBytes), next 4 bytes, length << 24 | rank (0: empty). */
  private readonly entries: Int32Array;
  private readonly mask: number;

  private constructor(tokenBytes: Uint8Array, tokenStarts: Int32Array, tokenRanks: Int32Array) {
    const count = tokenRanks.length;
    let size = 1;
    while (size < count * 2.5) size *= 2;
    this.mask = size - 1;
    this.entries = new Int32Array(size * 4);
    this.pairRanks = new Int32Array(0x10000).fill(NO_RANK);
    let maxTokenBytes = 0;
    let longBytes = 0;
    for (let t = 0; t < count; t++) {
      const length = tokenStarts[t + 1]! - tokenStarts[t]!;
      if (length > INLINE_BYTES) longBytes += length;
    }
    this.longTokenBytes = new Uint8Array(longBytes);
    longBytes = 0;
    for (let t = 0; t < count; t++) {
      const start = tokenStarts[t]!;
      const end = tokenStarts[t + 1]!;
      const length = end - start;
      const rank = tokenRanks[t]!;
      if (length === 0 || length > 255 || rank < 0 || rank > 0xffffff) {
        throw new IllegalStateError('unreadable BPE rank data');
      }
      maxTokenBytes = Math.max(maxTokenBytes, length);
      if (length === 2) this.pairRanks[(tokenBytes[start]! << 8) | tokenBytes[start + 1]!] = rank;
      const hash = hashBytes(tokenBytes, start, end);
      let slot = hash & this.mask;
      while (this.entries[slot * 4 + 3] !== 0) slot = (slot + 1) & this.mask;
      const at = slot * 4;
      this.entries[at] = hash;
      if (length <= INLINE_BYTES) {
        this.entries[at + 1] = word(tokenBytes, start, Math.min(end, start + 4));
        this.entries[at + 2] = length > 4 ? word(tokenBytes, start + 4, end) : 0;
      } else {
        this.longTokenBytes.set(tokenBytes.subarray(start, end), longBytes);
        this.entries[at + 1] = longBytes;
        longBytes += length;
      }
      this.entries[at + 3] = (length << 24) | rank;
    }
    this.maxTokenBytes = maxTokenBytes;
    for (let b = 0; b < 256; b++) {
      // Every encoding js-tiktoken ships has all 256 single bytes as tokens; the counters rely on it
      // (every part left by the merges is a token, so the count is the number of parts).
      if (this.rank(Uint8Array.of(b), 0, 1) === NO_RANK) {
        throw new IllegalStateError(`the encoding has no token for the byte ${b}`);
      }
    }
  }

  /**
   * Parses js-tiktoken's rank data: lines of `<name> <first rank> <base64 token> <base64 token> …`, the
   * tokens of a line having consecutive ranks.
   */
  static fromTiktoken(bpe: TiktokenBPE): BpeRankTable {
    const text = bpe.bpe_ranks;
    let bytes = new Uint8Array(Math.ceil(text.length * 0.75));
    let byteCount = 0;
    const starts: number[] = [];
    const ranks: number[] = [];
    for (const line of text.split('\n')) {
      if (line.length === 0) continue;
      const fields = line.split(' ');
      let rank = Number.parseInt(fields[1] ?? '', 10);
      if (!Number.isInteger(rank) || rank < 0) throw new IllegalStateError('unreadable BPE rank data');
      for (let f = 2; f < fields.length; f++, rank++) {
        const token = fields[f]!;
        if (byteCount + token.length > bytes.length) {
          const grown = new Uint8Array(bytes.length * 2 + token.length);
          grown.set(bytes);
          bytes = grown;
        }
        starts.push(byteCount);
        ranks.push(rank);
        byteCount = decodeBase64(token, bytes, byteCount);
      }
    }
    starts.push(byteCount);
    return new BpeRankTable(bytes.slice(0, byteCount), Int32Array.from(starts), Int32Array.from(ranks));
  }

  /** Rank of bytes[start .. end) as a token, or NO_RANK. */
  rank(bytes: Uint8Array, start: number, end: number): number {
    const length = end - start;
    if (length === 2) return this.pairRanks[(bytes[start]! << 8) | bytes[start + 1]!]!;
    if (length > this.maxTokenBytes) return NO_RANK;
    return this.rankWithHash(bytes, start, end, hashBytes(bytes, start, end));
  }

  /** rank() for a caller that already has hashBytes(bytes, start, end). */
  rankWithHash(bytes: Uint8Array, start: number, end: number, hash: number): number {
    const length = end - start;
    const entries = this.entries;
    const mask = this.mask;
    if (length <= INLINE_BYTES) {
      return this.rankOfWords(
        word(bytes, start, Math.min(end, start + 4)),
        length > 4 ? word(bytes, start + 4, end) : 0,
        length,
        hash,
      );
    }
    const long = this.longTokenBytes;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const at = slot * 4;
      const meta = entries[at + 3]!;
      if (meta === 0) return NO_RANK;
      if (entries[at] !== hash || meta >>> 24 !== length) continue;
      const offset = entries[at + 1]!;
      let i = 0;
      while (i < length && long[offset + i] === bytes[start + i]) i++;
      if (i === length) return meta & 0xffffff;
    }
  }

  /** Rank of a span of at most 8 bytes given as its two little-endian words (see hashWords). */
  rankOfWords(first: number, second: number, length: number, hash: number): number {
    const entries = this.entries;
    const mask = this.mask;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const at = slot * 4;
      const meta = entries[at + 3]!;
      if (meta === 0) return NO_RANK;
      if (entries[at] === hash && entries[at + 1] === first && entries[at + 2] === second && meta >>> 24 === length) {
        return meta & 0xffffff;
      }
    }
  }
}

/** Tokens of at most this many bytes are stored in their table entry. */
export const INLINE_BYTES = 8;

/** Up to 4 bytes as one little-endian int. */
export function word(bytes: Uint8Array, start: number, end: number): number {
  let w = 0;
  for (let i = end - 1; i >= start; i--) w = (w << 8) | bytes[i]!;
  return w;
}

/**
 * Hash of a span: for at most 8 bytes a mix of its two little-endian words and its length (no loop over
 * bytes), for longer ones FNV-1a; both end in a multiply-xorshift so that the low bits (the slot) vary.
 */
export function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  const length = end - start;
  if (length <= INLINE_BYTES) {
    return hashWords(word(bytes, start, Math.min(end, start + 4)), length > 4 ? word(bytes, start + 4, end) : 0, length);
  }
  let h = 0x811c9dc5 ^ length;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  return h ^ (h >>> 13);
}

/** hashBytes of a span of at most 8 bytes given as its two words. */
export function hashWords(first: number, second: number, length: number): number {
  let h = Math.imul(first ^ Math.imul(length, 0x9e3779b1), 0x85ebca6b) ^ Math.imul(second, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 15), 0x27d4eb2f);
  return h ^ (h >>> 16);
}

const BASE64_VALUES = (() => {
  const values = new Int8Array(128).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < alphabet.length; i++) values[alphabet.charCodeAt(i)] = i;
  return values;
})();

/** Decodes one padded base64 token into `out` at `at`; returns the new end. */
function decodeBase64(token: string, out: Uint8Array, at: number): number {
  let bits = 0;
  let bitCount = 0;
  let end = at;
  for (let i = 0; i < token.length; i++) {
    const unit = token.charCodeAt(i);
    if (unit === 0x3d) break; // '=' padding
    const value = unit < 128 ? BASE64_VALUES[unit]! : -1;
    if (value < 0) throw new IllegalStateError('unreadable BPE rank data');
    bits = (bits << 6) | value;
    bitCount += 6;
    if (bitCount >= 8) {
      bitCount -= 8;
      out[end++] = (bits >> bitCount) & 0xff;
      bits &= (1 << bitCount) - 1;
    }
  }
  return end;
}
