/**
 * Token counts of recently seen pieces (byte sequences of up to `keyBytes` bytes), direct-mapped: a piece
 * has one slot, chosen by its hash, and a newer piece with the same slot replaces it. Memory is fixed at
 * construction — slots × (keyBytes + 7) bytes — and nothing is allocated per lookup.
 */
export class PieceCountCache {
  private readonly keys: Uint8Array;
  private readonly hashes: Int32Array;
  /** Key length per slot; 0 marks an empty slot. */
  private readonly lengths: Uint8Array | Uint16Array;
  private readonly counts: Uint16Array;
  private readonly mask: number;

  constructor(
    slots: number,
    readonly keyBytes: number,
  ) {
    this.mask = slots - 1;
    this.keys = new Uint8Array(slots * keyBytes);
    this.hashes = new Int32Array(slots);
    this.lengths = keyBytes < 256 ? new Uint8Array(slots) : new Uint16Array(slots);
    this.counts = new Uint16Array(slots);
  }

  /** The cached count of bytes[0 .. n), or -1. `hash` is any hash of those bytes, the same for every call. */
  get(bytes: Uint8Array, n: number, hash: number): number {
    const slot = (hash >>> 8) & this.mask;
    if (this.lengths[slot] !== n || this.hashes[slot] !== hash) return -1;
    const keys = this.keys;
    const at = slot * this.keyBytes;
    for (let i = 0; i < n; i++) if (keys[at + i] !== bytes[i]) return -1;
    return this.counts[slot]!;
  }

  set(bytes: Uint8Array, n: number, hash: number, count: number): void {
    const slot = (hash >>> 8) & this.mask;
    this.keys.set(bytes.subarray(0, n), slot * this.keyBytes);
    this.lengths[slot] = n;
    this.hashes[slot] = hash;
    this.counts[slot] = count;
  }

  clear(): void {
    this.lengths.fill(0);
  }
}
