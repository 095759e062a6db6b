import type { EventLogState } from '../repository/SessionRepository.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { positionalNeighbourRuns } from '../repository/EventNeighbourhoodRepository.js';
import { formatRecallDate } from './recallBlock.js';
import { InvertedIndex, type Bm25Parameters } from './InvertedIndex.js';
import { searchableText } from './searchTerms.js';

/** One ranked hit of a session index. */
export interface IndexHit {
  event: SessionEvent;
  score: number;
}

/**
 * Ranking settings, chosen on the LoCoMo recordings and the latency benchmark (docs/recall.md): OR over the
 * query's words (stemmed, stop words dropped), no prefix or fuzzy expansion (stemming already joins "painted"
 * and "painting"; expansion cost latency and no recall), and `b` 0.4, which penalises long messages less than
 * the usual 0.75, because a long tool output is not less relevant for being long.
 */
const BM25: Bm25Parameters = { k: 1.2, b: 0.4, d: 0.5 };

/** An event of the log as last read (the archived flag matters) and its position, for the order of equal scores. */
interface Entry {
  event: SessionEvent;
  position: number;
}

/**
 * The full-text index of one session's log (InvertedIndex, BM25+ ranking, best `limit` only) and the events it was built from.
 * It is kept current without rebuilding: `append` adds the tail of the log, `sync` diffs a full read (after a
 * compaction, or any change that is not a pure append) and re-indexes only the events whose text changed.
 * Not safe for concurrent updates by itself: Bm25Retriever serialises them per session.
 */
export class SessionIndex {
  /** Log state (version and purge generation) the index reflects; null until the first update. */
  state: EventLogState | null = null;
  private readonly search = new InvertedIndex(BM25);
  private readonly entries = new Map<string, Entry>();
  /** The log in order (entry.position is the index here): neighbours are read from it, not from the store. */
  private order: Entry[] = [];
  private lastId: string | null = null;
  /**
   * How many entries at the start of `order` are archived: a compaction changes nothing before the first
   * active entry (or the first entry it names), so it is applied from there without walking the archive.
   */
  private archivedPrefix = 0;
  /** Purges applied by `remove` since `state` was last set (see there). */
  unseenPurges = 0;

  constructor(
    readonly sessionId: string,
    /** Who owned the session when the index was built, and when it was created: a recreated id is another log. */
    readonly owner: string,
    readonly createdAt: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get lastEventId(): string | null {
    return this.lastId;
  }

  /** Whether `event` is the last event indexed, in the same state (a compaction may have archived it since). */
  continues(event: SessionEvent): boolean {
    const last = this.lastId === null ? undefined : this.entries.get(this.lastId)?.event;
    return last !== undefined && last.id === event.id && last.archived === event.archived;
  }

  /** Adds events appended after the last one indexed; false (nothing changed) when `tail` repeats a known event. */
  append(tail: readonly SessionEvent[], state: EventLogState): boolean {
    if (tail.some((e) => this.entries.has(e.id))) return false;
    for (const event of tail) {
      const entry = { event, position: this.order.length };
      this.order.push(entry);
      this.entries.set(event.id, entry);
      this.index(entry);
    }
    if (tail.length > 0) this.lastId = tail[tail.length - 1]!.id;
    this.extendArchivedPrefix();
    this.state = state;
    return true;
  }

  /** Brings the index to `log` (the whole log, in order): new events added, removed ones dropped, changed ones re-indexed. */
  sync(log: readonly SessionEvent[], state: EventLogState | null): void {
    const present = new Set<string>();
    const order: Entry[] = [];
    log.forEach((event, position) => {
      present.add(event.id);
      const known = this.entries.get(event.id);
      const entry = { event, position };
      order.push(entry);
      if (known !== undefined && searchableText(known.event) === searchableText(event)) {
        this.entries.set(event.id, entry);
        return;
      }
      // New, or rewritten in place (redacted): the old words must stop finding it.
      if (known !== undefined) this.unindex(known);
      this.entries.set(event.id, entry);
      this.index(entry);
    });
    for (const [id, entry] of this.entries) {
      if (present.has(id)) continue;
      this.unindex(entry);
      this.entries.delete(id);
    }
    this.order = order;
    this.archivedPrefix = 0;
    this.extendArchivedPrefix();
    this.lastId = log.length === 0 ? null : log[log.length - 1]!.id;
    this.state = state;
    this.unseenPurges = 0;
  }

  /**
   * Applies a compaction committed against log version `versionBefore` without reading the log: the log
   * becomes the archived events it held (unchanged), then `archived`, then `retained` (SessionRepository's
   * rule). The index must be at that version but for pure appends, which are then in `archived` or `retained`
   * (non-synthetic events the index has not seen; each took one version step). False, with nothing changed,
   * when that does not hold (another process compacted or rewrote meanwhile): the caller reads the log.
   */
  applyCompaction(
    archived: readonly SessionEvent[],
    retained: readonly SessionEvent[],
    versionBefore: number,
    purgeGeneration: number | null,
  ): boolean {
    const known = this.state;
    if (known === null || known.purgeGeneration !== purgeGeneration) return false;
    const output = new Set<string>();
    let appended = 0;
    for (const e of [...archived, ...retained]) {
      if (output.has(e.id)) return false;
      output.add(e.id);
      if (!this.entries.has(e.id) && !e.isSynthetic()) appended++;
    }
    if (known.version + appended !== versionBefore) return false;
    // Archived events not in the output stay where they are; the rest is the window the compaction replaced.
    // An active event in neither list was removed (a superseded summary); a real message removed means a change
    // the index has not seen.
    const stays = (e: SessionEvent) => e.archived && !output.has(e.id);
    // Every entry before the first active one stays, but for those the output names: the first that can
    // change is found from the output, not by walking the archive.
    let first = this.archivedPrefix;
    for (const id of output) first = Math.min(first, this.entries.get(id)?.position ?? first);
    const changed = this.order.slice(first);
    for (const entry of changed) {
      if (!stays(entry.event) && !output.has(entry.event.id) && !entry.event.isSynthetic()) return false;
    }
    // Truncated in place: copying the untouched archive would cost O(archive) per compaction.
    const order = this.order;
    order.length = first;
    for (const entry of changed) {
      if (stays(entry.event)) order.push(entry);
      else if (!output.has(entry.event.id)) {
        this.unindex(entry);
        this.entries.delete(entry.event.id);
      }
    }
    for (const event of [...archived.map((e) => e.asArchived()), ...retained]) {
      const previous = this.entries.get(event.id);
      const entry = { event, position: 0 };
      if (previous === undefined || searchableText(previous.event) !== searchableText(event)) {
        if (previous !== undefined) this.unindex(previous);
        this.index(entry);
      }
      this.entries.set(event.id, entry);
      order.push(entry);
    }
    for (let i = first; i < order.length; i++) order[i]!.position = i;
    this.archivedPrefix = first;
    this.extendArchivedPrefix();
    this.lastId = order.length === 0 ? null : order[order.length - 1]!.event.id;
    this.state = { version: versionBefore + 1, purgeGeneration };
    return true;
  }

  /**
   * Drops purged events (retention) at once, without reading the log. The purge moved the log's purge
   * generation, which the index cannot read here: `unseenPurges` counts them, for the next update to check
   * that the generation moved by exactly that many (anything else: another process purged too).
   */
  remove(eventIds: readonly string[]): void {
    const gone = new Set(eventIds);
    const order: Entry[] = [];
    for (const entry of this.order) {
      if (!gone.has(entry.event.id)) {
        entry.position = order.length;
        order.push(entry);
        continue;
      }
      this.unindex(entry);
      this.entries.delete(entry.event.id);
    }
    this.order = order;
    this.archivedPrefix = 0;
    this.extendArchivedPrefix();
    this.lastId = order.length === 0 ? null : order[order.length - 1]!.event.id;
    this.unseenPurges++;
  }

  /** Stops the words of these events from finding them at once (a redaction); the next update re-reads them. */
  forget(eventIds: readonly string[]): void {
    for (const id of eventIds) {
      const entry = this.entries.get(id);
      if (entry === undefined) continue;
      this.unindex(entry);
      this.entries.delete(id);
    }
    this.state = null;
  }

  /** The events around `eventIds` from the log as last read (see Retriever.findEventNeighbours). */
  neighbours(eventIds: readonly string[], radius: number): SessionEvent[][] {
    const positions: number[] = [];
    for (const id of eventIds) {
      const p = this.entries.get(id)?.position;
      if (p !== undefined) positions.push(p);
    }
    return positionalNeighbourRuns(positions, radius, this.order.length, (i) => this.order[i]!.event);
  }

  /** Best first; equal scores newest first (the later position in the log). `accept` filters before `limit` is applied. */
  query(text: string, accept: (event: SessionEvent) => boolean, limit: number): IndexHit[] {
    const rank = (id: string): number | null => {
      const entry = this.entries.get(id);
      return entry !== undefined && accept(entry.event) ? entry.position : null;
    };
    return this.search.search(text, limit, rank).map(({ key, score }) => ({ event: this.entries.get(key)!.event, score }));
  }

  /** Moves `archivedPrefix` past archived entries that follow it (entries before it are archived already). */
  private extendArchivedPrefix(): void {
    while (this.archivedPrefix < this.order.length && this.order[this.archivedPrefix]!.event.archived) this.archivedPrefix++;
  }

  /** The document of an entry: its date and rendering (words of the date make "what did I say on 8 May" work). */
  private document(entry: Entry): string | null {
    const text = searchableText(entry.event);
    return text === null ? null : `${formatRecallDate(entry.event.timestamp)} ${text}`;
  }

  private index(entry: Entry): void {
    const document = this.document(entry);
    if (document !== null) this.search.add(entry.event.id, document);
  }

  /** Removes an entry's document exactly as it was added (its terms are found by re-tokenising it). */
  private unindex(entry: Entry): void {
    const document = this.document(entry);
    if (document !== null) this.search.remove(entry.event.id, document);
  }
}
