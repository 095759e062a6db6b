import MiniSearch, { type SearchOptions } from 'minisearch';
import type { EventLogState } from '../repository/SessionRepository.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { formatRecallDate } from './recallBlock.js';
import { processSearchTerm, searchableText } from './searchTerms.js';

interface IndexedText {
  id: string;
  /** The event's date and rendering: "8 May 2023 User: …". */
  text: string;
}

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
const SEARCH_OPTIONS: SearchOptions = {
  combineWith: 'OR',
  prefix: false,
  bm25: { k: 1.2, b: 0.4, d: 0.5 },
};

/** An event of the log as last read (the archived flag matters) and its position, for the order of equal scores. */
interface Entry {
  event: SessionEvent;
  position: number;
}

/**
 * The full-text index of one session's log (minisearch, BM25+ ranking) and the events it was built from.
 * It is kept current without rebuilding: `append` adds the tail of the log, `sync` diffs a full read (after a
 * compaction, or any change that is not a pure append) and re-indexes only the events whose text changed.
 * Not safe for concurrent updates by itself: Bm25Retriever serialises them per session.
 */
export class SessionIndex {
  /** Log state (version and purge generation) the index reflects; null until the first update. */
  state: EventLogState | null = null;
  private readonly search = new MiniSearch<IndexedText>({
    fields: ['text'],
    storeFields: [],
    processTerm: processSearchTerm,
    searchOptions: SEARCH_OPTIONS,
  });
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
    let position = this.entries.size;
    for (const event of tail) {
      const entry = { event, position: position++ };
      this.entries.set(event.id, entry);
      this.index(entry);
    }
    if (tail.length > 0) this.lastId = tail[tail.length - 1]!.id;
    this.state = state;
    return true;
  }

  /** Brings the index to `log` (the whole log, in order): new events added, removed ones dropped, changed ones re-indexed. */
  sync(log: readonly SessionEvent[], state: EventLogState | null): void {
    const present = new Set<string>();
    log.forEach((event, position) => {
      present.add(event.id);
      const known = this.entries.get(event.id);
      const entry = { event, position };
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
    this.lastId = log.length === 0 ? null : log[log.length - 1]!.id;
    this.state = state;
  }

  /** Best first; equal scores newest first. `accept` filters before `limit` is applied. */
  query(text: string, accept: (event: SessionEvent) => boolean, limit: number): IndexHit[] {
    const hits: { event: SessionEvent; score: number; position: number }[] = [];
    // minisearch returns its results best first: read only as far as the limit (and the ties at its edge).
    for (const result of this.search.search(text)) {
      if (hits.length >= limit && result.score < hits[hits.length - 1]!.score) break;
      const entry = this.entries.get(String(result.id));
      if (entry !== undefined && accept(entry.event))
        hits.push({ event: entry.event, score: result.score, position: entry.position });
    }
    hits.sort((a, b) => b.score - a.score || b.position - a.position);
    return hits.slice(0, limit).map(({ event, score }) => ({ event, score }));
  }

  /** The document of an entry: its date and rendering (words of the date make "what did I say on 8 May" work). */
  private document(entry: Entry): IndexedText | null {
    const text = searchableText(entry.event);
    return text === null ? null : { id: entry.event.id, text: `${formatRecallDate(entry.event.timestamp)} ${text}` };
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
