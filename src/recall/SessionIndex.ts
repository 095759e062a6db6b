import MiniSearch, { type SearchOptions } from 'minisearch';
import type { SessionEvent } from '../session/SessionEvent.js';
import { processSearchTerm, searchableText } from './searchTerms.js';

interface IndexedText {
  id: string;
  text: string;
}

/** One ranked hit of a session index. */
export interface IndexHit {
  event: SessionEvent;
  score: number;
}

/**
 * Query-side options: a query term also matches longer words it starts with ("paint" → "painting"), once
 * it is long enough not to match half the vocabulary; prefix matches weigh less than exact ones.
 */
const SEARCH_OPTIONS: SearchOptions = {
  combineWith: 'OR',
  prefix: (term) => term.length >= 4,
  weights: { fuzzy: 0.45, prefix: 0.5 },
};

/**
 * The full-text index of one session's log (minisearch, BM25+ ranking) and the events it was built from.
 * It is kept current without rebuilding: `append` adds the tail of the log, `sync` diffs a full read
 * (after a compaction, or a change that is not a pure append) and only re-indexes what changed.
 * Not thread-safe by itself: Bm25Retriever serialises the updates of one session.
 */
export class SessionIndex {
  /** Log version the index reflects; null until the first sync. */
  version: number | null = null;
  private readonly search = new MiniSearch<IndexedText>({
    fields: ['text'],
    storeFields: [],
    processTerm: processSearchTerm,
    searchOptions: SEARCH_OPTIONS,
  });
  /** Every event of the log by id (searchable or not), as last read: the archived flag matters. */
  private readonly events = new Map<string, SessionEvent>();
  /** Position in the log, for the order of equal scores. */
  private readonly positions = new Map<string, number>();
  private lastId: string | null = null;

  constructor(
    readonly sessionId: string,
    /** Who owned the session when the index was built, and when it was created: a recreated id is another log. */
    readonly owner: string,
    readonly createdAt: number,
  ) {}

  get size(): number {
    return this.events.size;
  }

  get lastEventId(): string | null {
    return this.lastId;
  }

  /** Whether `event` is the last event indexed, in the same state (a compaction may have archived it since). */
  continues(event: SessionEvent): boolean {
    const last = this.lastId === null ? undefined : this.events.get(this.lastId);
    return last !== undefined && last.id === event.id && last.archived === event.archived;
  }

  /** Adds events appended after the last one indexed; false when `tail` does not continue the log as indexed. */
  append(tail: readonly SessionEvent[], version: number): boolean {
    if (tail.some((e) => this.events.has(e.id))) return false;
    let position = this.events.size;
    for (const event of tail) this.put(event, position++);
    if (tail.length > 0) this.lastId = tail[tail.length - 1]!.id;
    this.version = version;
    return true;
  }

  /** Brings the index to `log` (the whole log, in order): new events added, removed ones discarded, changed ones re-indexed. */
  sync(log: readonly SessionEvent[], version: number): void {
    const seen = new Set<string>();
    log.forEach((event, position) => {
      seen.add(event.id);
      const known = this.events.get(event.id);
      if (known === undefined) {
        this.put(event, position);
        return;
      }
      if (searchableText(known) !== searchableText(event)) {
        // Redacted or rewritten in place: the old words must stop finding it.
        if (this.search.has(event.id)) this.search.discard(event.id);
        this.put(event, position);
        return;
      }
      this.events.set(event.id, event);
      this.positions.set(event.id, position);
    });
    for (const id of [...this.events.keys()]) {
      if (seen.has(id)) continue;
      if (this.search.has(id)) this.search.discard(id);
      this.events.delete(id);
      this.positions.delete(id);
    }
    this.lastId = log.length === 0 ? null : log[log.length - 1]!.id;
    this.version = version;
  }

  /** Best first; equal scores newest first. `accept` filters before `limit` is applied. */
  query(text: string, accept: (event: SessionEvent) => boolean, limit: number): IndexHit[] {
    const hits: IndexHit[] = [];
    for (const result of this.search.search(text)) {
      const event = this.events.get(String(result.id));
      if (event !== undefined && accept(event)) hits.push({ event, score: result.score });
    }
    hits.sort((a, b) => b.score - a.score || this.positions.get(b.event.id)! - this.positions.get(a.event.id)!);
    return hits.slice(0, limit);
  }

  private put(event: SessionEvent, position: number): void {
    this.events.set(event.id, event);
    this.positions.set(event.id, position);
    const text = searchableText(event);
    if (text !== null) this.search.add({ id: event.id, text });
  }
}
