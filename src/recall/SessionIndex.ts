import MiniSearch, { type SearchOptions } from 'minisearch';
import type { SessionEvent } from '../session/SessionEvent.js';
import { formatRecallDate } from './recallBlock.js';
import { processSearchTerm, searchableText } from './searchTerms.js';

interface IndexedText {
  id: string;
  /** The event's date and rendering: "8 May 2023 User: …". */
  text: string;
  /** The texts of the events right before and after it on the same branch. */
  context: string;
}

/** One ranked hit of a session index. */
export interface IndexHit {
  event: SessionEvent;
  score: number;
}

/**
 * Ranking settings, chosen on the LoCoMo recordings (docs/recall.md): in a conversation the words of a
 * question and of its answer are split over two messages ("Do you have a pet?" / "Oscar, my guinea pig"),
 * so each event is also found, at a fifth of the weight, by the words of its neighbours. A query term
 * matches longer words it starts with once it has 4 letters; `b` 0.4 penalises long messages less than the
 * usual 0.75, because a long tool output is not less relevant for being long.
 */
const SEARCH_OPTIONS: SearchOptions = {
  combineWith: 'OR',
  boost: { text: 1, context: 0.2 },
  prefix: (term) => term.length >= 4,
  weights: { fuzzy: 0.45, prefix: 0.5 },
  bm25: { k: 1.2, b: 0.4, d: 0.5 },
};

/** Where an event sat in the log when it was indexed: its context depends on its neighbours. */
interface Entry {
  event: SessionEvent;
  position: number;
  previous: string | null;
  next: string | null;
}

/**
 * The full-text index of one session's log (minisearch, BM25+ ranking) and the events it was built from.
 * It is kept current without rebuilding: `append` adds the tail of the log, `sync` diffs a full read
 * (after a compaction, or any change that is not a pure append) and re-indexes only the events whose text
 * or neighbours changed. Not safe for concurrent updates by itself: Bm25Retriever serialises them per session.
 */
export class SessionIndex {
  /** Log version the index reflects; null until the first update. */
  version: number | null = null;
  private readonly search = new MiniSearch<IndexedText>({
    fields: ['text', 'context'],
    storeFields: [],
    processTerm: processSearchTerm,
    searchOptions: SEARCH_OPTIONS,
  });
  /** Every event of the log by id (searchable or not), as last read: the archived flag matters. */
  private readonly entries = new Map<string, Entry>();
  private lastId: string | null = null;

  constructor(
    readonly sessionId: string,
    /** Who owned the session when the index was built, and when it was created: a recreated id is another log. */
    readonly owner: string,
    readonly createdAt: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Whether `event` is the last event indexed, in the same state (a compaction may have archived it since). */
  continues(event: SessionEvent): boolean {
    const last = this.lastId === null ? undefined : this.entries.get(this.lastId)?.event;
    return last !== undefined && last.id === event.id && last.archived === event.archived;
  }

  get lastEventId(): string | null {
    return this.lastId;
  }

  /** Adds events appended after the last one indexed; false (nothing changed) when `tail` repeats a known event. */
  append(tail: readonly SessionEvent[], version: number): boolean {
    if (tail.some((e) => this.entries.has(e.id))) return false;
    const last = this.lastId === null ? undefined : this.entries.get(this.lastId);
    // The former last event gains a next neighbour: its context changes, so it is indexed again.
    if (last !== undefined) this.unindex(last);
    const log = [...(last === undefined ? [] : [last.event]), ...tail];
    const offset = last === undefined ? this.entries.size : last.position;
    log.forEach((event, i) => {
      const previous = i === 0 ? (last?.previous ?? null) : sameBranch(log[i - 1], event);
      this.entries.set(event.id, { event, position: offset + i, previous, next: sameBranch(log[i + 1], event) });
    });
    for (const event of log) this.index(this.entries.get(event.id)!);
    if (tail.length > 0) this.lastId = tail[tail.length - 1]!.id;
    this.version = version;
    return true;
  }

  /** Brings the index to `log` (the whole log, in order): new events added, removed ones dropped, changed ones re-indexed. */
  sync(log: readonly SessionEvent[], version: number): void {
    const changed = new Set<string>();
    for (const event of log) {
      const known = this.entries.get(event.id);
      if (known === undefined || searchableText(known.event) !== searchableText(event)) changed.add(event.id);
    }
    const next = log.map((event, i) => ({
      event,
      position: i,
      previous: sameBranch(log[i - 1], event),
      next: sameBranch(log[i + 1], event),
    }));
    const stale = next.filter((entry) => {
      const known = this.entries.get(entry.event.id);
      return (
        known === undefined ||
        changed.has(entry.event.id) ||
        known.previous !== entry.previous ||
        known.next !== entry.next ||
        (entry.previous !== null && changed.has(entry.previous)) ||
        (entry.next !== null && changed.has(entry.next))
      );
    });
    // Old documents leave the index while the old neighbours they were built from are still known.
    const present = new Set(log.map((e) => e.id));
    for (const entry of this.entries.values()) if (!present.has(entry.event.id)) this.unindex(entry);
    for (const entry of stale) {
      const known = this.entries.get(entry.event.id);
      if (known !== undefined) this.unindex(known);
    }
    this.entries.clear();
    for (const entry of next) this.entries.set(entry.event.id, entry);
    for (const entry of stale) this.index(entry);
    this.lastId = log.length === 0 ? null : log[log.length - 1]!.id;
    this.version = version;
  }

  /** Best first; equal scores newest first. `accept` filters before `limit` is applied. */
  query(text: string, accept: (event: SessionEvent) => boolean, limit: number): IndexHit[] {
    const hits: { event: SessionEvent; score: number; position: number }[] = [];
    for (const result of this.search.search(text)) {
      const entry = this.entries.get(String(result.id));
      if (entry !== undefined && accept(entry.event))
        hits.push({ event: entry.event, score: result.score, position: entry.position });
    }
    hits.sort((a, b) => b.score - a.score || b.position - a.position);
    return hits.slice(0, limit).map(({ event, score }) => ({ event, score }));
  }

  /** The document of an entry, built from the neighbours it has in `entries`. */
  private document(entry: Entry): IndexedText | null {
    const text = searchableText(entry.event);
    if (text === null) return null;
    const around = [entry.previous, entry.next].map((id) => {
      const neighbour = id === null ? undefined : this.entries.get(id)?.event;
      return neighbour === undefined ? '' : (searchableText(neighbour) ?? '');
    });
    return { id: entry.event.id, text: `${formatRecallDate(entry.event.timestamp)} ${text}`, context: around.join('\n') };
  }

  private index(entry: Entry): void {
    const document = this.document(entry);
    if (document !== null) this.search.add(document);
  }

  /** Removes an entry's document exactly as it was added (minisearch re-tokenises it to find its terms). */
  private unindex(entry: Entry): void {
    const document = this.document(entry);
    if (document !== null && this.search.has(document.id)) this.search.remove(document);
  }
}

/** The id of `neighbour` when it is on the same branch as `event` (a branch's words never lend themselves to the root). */
function sameBranch(neighbour: SessionEvent | undefined, event: SessionEvent): string | null {
  return neighbour !== undefined && neighbour.branch === event.branch ? neighbour.id : null;
}
