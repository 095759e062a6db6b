import type { SeqRange } from './search.js';

/** Sessions whose probe results are kept at most; the map is cleared when full. */
const SESSIONS_KEPT = 1_024;
/** Words kept per session at most; a session's entry starts over when full. */
const WORDS_KEPT = 4_096;

interface SessionProbes {
  lo: number;
  /** PRAGMA data_version when probed: another connection's commit changes it. */
  stamp: number;
  /** Per word: the rows counted (capped by the probe at `rare + 1`) and the range's last seq then. */
  counts: Map<string, { n: number; hi: number }>;
}

/**
 * What the word probes of a session's bounded search found (how many of a word's index rows lie in the range the
 * search ranks, up to `rare + 1`), kept while it provably still holds: each turn of a long conversation asks about
 * the same few words, and at 100,000 events a question's 4–5 probes took ~0.3 ms of its ~2 ms search
 * (docs/recall.md).
 *
 * Rows only ever join the index above the range's last seq (seqs are AUTOINCREMENT: never reused, every insert takes
 * a new highest one). So while no row was deleted or had its text rewritten on this connection (a TEMP trigger calls
 * `clear`) and no other connection committed (`stamp`, PRAGMA data_version), and the range still starts where
 * it did:
 * - a common word (more than `rare` rows) is still common however far the range grew;
 * - a word with n rows has at most n + (hi' - hi) now: still rare while that is at most `rare`.
 * Anything else is probed again. A word's status is all a search takes from here, so a search answers exactly as
 * with fresh probes.
 */
export class WordProbeCache {
  private readonly sessions = new Map<string, SessionProbes>();

  constructor(private readonly rare: number) {}

  /**
   * Everything is probed again: a row of the index was deleted or its text rewritten on this connection, or a
   * migration may have rebuilt the index.
   */
  clear(): void {
    this.sessions.clear();
  }

  /**
   * Whether `word` is rare in `range` of session `sessionId`'s search, `probe` counting it (up to `rare + 1`) when
   * what is kept does not tell. `stamp`: PRAGMA data_version read before the search's snapshot was taken.
   */
  isRare(sessionId: string, range: SeqRange, stamp: number, word: string, probe: () => number): boolean {
    const kept = this.current(sessionId, range, stamp);
    const known = kept.counts.get(word);
    if (known !== undefined && range.hi >= known.hi) {
      if (known.n > this.rare) return false;
      if (known.n + (range.hi - known.hi) <= this.rare) return true;
    }
    const n = probe();
    if (kept.counts.size >= WORDS_KEPT) kept.counts.clear();
    kept.counts.set(word, { n, hi: range.hi });
    return n <= this.rare;
  }

  private current(sessionId: string, range: SeqRange, stamp: number): SessionProbes {
    let kept = this.sessions.get(sessionId);
    const valid = kept !== undefined && kept.lo === range.lo && kept.stamp === stamp;
    if (!valid) {
      if (kept !== undefined) this.sessions.delete(sessionId);
      if (this.sessions.size >= SESSIONS_KEPT) this.sessions.clear();
      kept = { lo: range.lo, stamp, counts: new Map() };
      this.sessions.set(sessionId, kept);
    }
    return kept!;
  }
}
