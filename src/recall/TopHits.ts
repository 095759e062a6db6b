/** A document key and its score. */
export interface RankedKey {
  key: string;
  score: number;
}

/**
 * The best `limit` hits by (score, rank), higher first: a bounded min-heap whose root is the hit the next
 * better one replaces. Ranks are distinct (a document's position), so the order is total.
 */
export class TopHits {
  private readonly keys: string[] = [];
  private readonly scores: number[] = [];
  private readonly ranks: number[] = [];

  constructor(private readonly limit: number) {}

  /** Whether a document with this score could enter (ties with the root are decided by rank in `offer`). */
  admits(score: number): boolean {
    return this.keys.length < this.limit || score >= this.scores[0]!;
  }

  offer(key: string, score: number, rank: number): void {
    if (this.keys.length < this.limit) {
      this.keys.push(key);
      this.scores.push(score);
      this.ranks.push(rank);
      this.up(this.keys.length - 1);
      return;
    }
    if (!this.worse(0, score, rank)) return;
    this.keys[0] = key;
    this.scores[0] = score;
    this.ranks[0] = rank;
    this.down(0);
  }

  /** The hits, best first. */
  best(): RankedKey[] {
    const order = this.keys.map((_, i) => i);
    order.sort((x, y) => this.scores[y]! - this.scores[x]! || this.ranks[y]! - this.ranks[x]!);
    return order.map((i) => ({ key: this.keys[i]!, score: this.scores[i]! }));
  }

  /** Whether the hit at `i` ranks below (score, rank). */
  private worse(i: number, score: number, rank: number): boolean {
    const s = this.scores[i]!;
    return s < score || (s === score && this.ranks[i]! < rank);
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.worse(i, this.scores[parent]!, this.ranks[parent]!)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.keys.length;
    for (;;) {
      let least = i;
      const left = 2 * i + 1;
      if (left < n && this.worse(left, this.scores[least]!, this.ranks[least]!)) least = left;
      if (left + 1 < n && this.worse(left + 1, this.scores[least]!, this.ranks[least]!)) least = left + 1;
      if (least === i) return;
      this.swap(i, least);
      i = least;
    }
  }

  private swap(i: number, j: number): void {
    const key = this.keys[i]!;
    this.keys[i] = this.keys[j]!;
    this.keys[j] = key;
    const score = this.scores[i]!;
    this.scores[i] = this.scores[j]!;
    this.scores[j] = score;
    const rank = this.ranks[i]!;
    this.ranks[i] = this.ranks[j]!;
    this.ranks[j] = rank;
  }
}
