import { InvalidArgumentError, requirePositiveInt, requireText } from '../errors.js';
import { EventFilter } from '../filter/EventFilter.js';
import type { EventLogState } from '../repository/SessionRepository.js';
import { KeyedMutex } from '../service/KeyedMutex.js';
import type { SessionService } from '../service/SessionService.js';
import type { SessionServiceEvents } from '../service/SessionServiceEvents.js';
import type { Session } from '../session/Session.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { ownSession, visibleTo } from './access.js';
import type { PreparedRetrieval, RetrievalRequest, RetrievedEvent, Retriever } from './Retriever.js';
import { normaliseRetrievalRequest, type NormalisedRetrievalRequest } from './retrievalRequest.js';
import { SessionIndex } from './SessionIndex.js';
import { subscribeToLifecycle } from './lifecycleHooks.js';
import { requireNeighbourRequest } from '../repository/EventNeighbourhoodRepository.js';

export interface Bm25RetrieverOptions {
  sessionService: SessionService;
  /**
   * Sessions whose index is kept in memory (default 100); beyond it the least recently searched one is
   * dropped and rebuilt from the log when it is searched again.
   */
  maxIndexedSessions?: number;
  /**
   * Events indexed across all sessions (default 1,000,000, about 0.9 GB at the measured 0.9 KB per event);
   * beyond it the least recently searched sessions are dropped. A session larger than this alone is still
   * indexed, alone.
   */
  maxIndexedEvents?: number;
  /** Events per read when an index is built from the log (default 5,000): a cold build is bounded steps. */
  readPageSize?: number;
}

export const DEFAULT_MAX_INDEXED_SESSIONS = 100;
export const DEFAULT_MAX_INDEXED_EVENTS = 1_000_000;
export const DEFAULT_INDEX_READ_PAGE_SIZE = 5_000;

/** A compaction committed in this process, applied to the index at its next update without reading the log. */
interface PendingCompaction {
  archived: readonly SessionEvent[];
  retained: readonly SessionEvent[];
  versionBefore: number;
}

/**
 * In-process full-text recall: BM25+ ranking (InvertedIndex, best hits only) over the whole log of a session — archived events
 * and summaries included — or over every session of one user.
 *
 * The index of a session is built lazily, on its first search, and then kept current from the log's
 * version and purge generation: a search after N appends indexes only those N events; a compaction, an
 * archive purge (retention, which leaves the version alone but moves the generation, run by any process) or
 * any other change is caught up by diffing the log against the index, never by rebuilding it. One update
 * per session runs at a time, so concurrent searches of a cold session build its index once. Memory is
 * bounded by `maxIndexedSessions` (least recently searched dropped first).
 *
 * With a service that has neither `getEventLogState` nor `getEventVersion`, every search re-reads the log
 * (still diffing, not rebuilding); with `getEventVersion` alone (or a repository that cannot report the
 * purge generation), a purge run by another process is seen only at the session's next version change.
 * DefaultSessionService has both.
 */
export class Bm25Retriever implements Retriever {
  readonly maxIndexedSessions: number;
  readonly maxIndexedEvents: number;
  readonly readPageSize: number;
  private readonly service: SessionService;
  /** Insertion order is recency order: a search moves its session to the end. */
  private readonly indexes = new Map<string, SessionIndex>();
  private readonly updates = new KeyedMutex();
  /** Sessions compacted through this service since their index was last brought up to date, without a known base version. */
  private readonly compacted = new Set<string>();
  /** Compactions and purges of indexed sessions since their last update, applied in order then. */
  private readonly pendingCompactions = new Map<string, PendingCompaction[]>();
  private readonly unsubscribe: () => void;
  private readonly unsubscribeLifecycle: () => void;
  /** The reads each handle of `prepare` started; a request takes them once. */
  private readonly preparations = new WeakMap<PreparedRetrieval, PreparedReads>();

  constructor(options: Bm25RetrieverOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    if (options.sessionService === null || options.sessionService === undefined) {
      throw new InvalidArgumentError('sessionService must not be null');
    }
    this.service = options.sessionService;
    this.maxIndexedSessions =
      options.maxIndexedSessions === undefined
        ? DEFAULT_MAX_INDEXED_SESSIONS
        : requirePositiveInt(options.maxIndexedSessions, 'maxIndexedSessions');
    this.maxIndexedEvents =
      options.maxIndexedEvents === undefined
        ? DEFAULT_MAX_INDEXED_EVENTS
        : requirePositiveInt(options.maxIndexedEvents, 'maxIndexedEvents');
    this.readPageSize =
      options.readPageSize === undefined
        ? DEFAULT_INDEX_READ_PAGE_SIZE
        : requirePositiveInt(options.readPageSize, 'readPageSize');
    // A compaction can look like appends from the log's tail alone (a strategy may put a summary last);
    // the service's own notice removes the doubt for every compaction run in this process.
    const events = (this.service as { events?: SessionServiceEvents }).events;
    this.unsubscribe =
      events?.on('compactionCompleted', ({ sessionId, result, versionBefore }) => {
        if (!this.indexes.has(sessionId)) return;
        // The result says what the log became: the index follows it at its next update, without a read.
        if (versionBefore === undefined) this.compacted.add(sessionId);
        else
          this.pending(this.pendingCompactions, sessionId).push({
            archived: result.archivedEvents,
            retained: result.compactedEvents,
            versionBefore,
          });
      }) ?? (() => undefined);
    // Erasure and redaction must not leave old words searchable in memory: the index goes, and a later
    // search rebuilds it from the log as it is now.
    this.unsubscribeLifecycle = subscribeToLifecycle(this.service, 'bm25-index', {
      forgetSession: (sessionId) => {
        const entries = this.indexes.get(sessionId)?.size ?? 0;
        this.evict(sessionId);
        this.compacted.delete(sessionId);
        return entries;
      },
      // A redacted text stops matching at once; the next search re-reads the log for the new text.
      forgetEvents: (sessionId, eventIds) => this.indexes.get(sessionId)?.forget(eventIds),
      // Purged archive events are dropped from the index at its next update, without a read.
      forgetPurged: (sessionId, eventIds) => this.indexes.get(sessionId)?.remove(eventIds),
    });
  }

  async retrieve(request: RetrievalRequest): Promise<RetrievedEvent[]> {
    const r = normaliseRetrievalRequest(request);
    if (r.query.trim() === '') return [];
    // The request's own session must be the caller's whenever a caller is named, in either scope. In a session's
    // search its log state is read at the same time: one round trip instead of two where the store pipelines
    // them (Redis), and the state update() reads unless something since made it stale.
    const prepared = this.takePrepared(request.prepared, r.sessionId);
    const state = r.scope === 'session' ? (prepared?.state ?? this.logState(r.sessionId)) : undefined;
    // Observed at once: when the session read fails or finds nothing, the state read's outcome is not wanted.
    state?.catch(() => undefined);
    const found = prepared?.session ?? this.service.findById(r.sessionId);
    const session = r.userId === null ? await found : await ownSession(this.service, r.sessionId, r.userId, found);
    if (r.scope === 'session') {
      if (session === null) return [];
      return this.searchSession(session, r, await state);
    }
    const hits: RetrievedEvent[] = [];
    for (const other of await this.service.findByUserId(r.userId!)) {
      // Defence in depth: a repository must only return the user's sessions, but a leak here would be a privacy bug.
      if (other.userId !== r.userId) continue;
      hits.push(...(await this.searchSession(other, r)));
    }
    hits.sort((a, b) => b.score - a.score || b.event.timestamp.getTime() - a.event.timestamp.getTime());
    return hits.slice(0, r.limit);
  }

  /**
   * Starts reading the session and its log state, as a request for it would begin (see Retriever.prepare); a
   * request that passes the handle as `prepared` uses these reads instead, once.
   */
  prepare(sessionId: string): PreparedRetrieval {
    const id = requireText(sessionId, 'sessionId');
    const reads: PreparedReads = { session: this.service.findById(id), state: this.logState(id) };
    // A handle that is never used must not leave a rejection unobserved.
    reads.session.catch(() => undefined);
    reads.state.catch(() => undefined);
    const handle: PreparedRetrieval = Object.freeze({ sessionId: id });
    this.preparations.set(handle, reads);
    return handle;
  }

  /** Sessions whose index is in memory, least recently searched first (for monitoring and tests). */
  indexedSessionIds(): string[] {
    return [...this.indexes.keys()];
  }

  /** Drops one session's index (or all); the next search rebuilds it from the log. */
  evict(sessionId?: string): void {
    if (sessionId === undefined) {
      this.indexes.clear();
      this.pendingCompactions.clear();
    } else {
      this.indexes.delete(sessionId);
      this.pendingCompactions.delete(sessionId);
    }
  }

  /** Events held by all indexes (what `maxIndexedEvents` bounds). */
  indexedEventCount(): number {
    let total = 0;
    for (const index of this.indexes.values()) total += index.size;
    return total;
  }

  /**
   * The events around `eventIds` in the session's log, from the positions its index holds (see
   * Retriever.findEventNeighbours): no read when the session was just searched, as ContextAssembler does.
   */
  async findEventNeighbours(sessionId: string, eventIds: readonly string[], radius: number): Promise<SessionEvent[][]> {
    const ids = requireNeighbourRequest(eventIds, radius);
    let index = this.indexes.get(sessionId);
    if (index === undefined) {
      const session = await this.service.findById(sessionId);
      if (session === null) return [];
      index = await this.currentIndex(session);
    }
    return index.neighbours(ids, radius);
  }

  /** Stops listening to the service and frees every index. */
  close(): void {
    this.unsubscribe();
    this.unsubscribeLifecycle();
    this.indexes.clear();
    this.compacted.clear();
    this.pendingCompactions.clear();
  }

  private async searchSession(
    session: Session,
    r: NormalisedRetrievalRequest,
    state?: EventLogState | null,
  ): Promise<RetrievedEvent[]> {
    const index = await this.currentIndex(session, state);
    const visible = visibleTo(r.branch);
    // Active events are already in the prompt of the request's own session; other sessions' never are.
    const excludeActive = !r.includeActive && session.id === r.sessionId;
    const accept = (e: SessionEvent) => visible(e) && (!excludeActive || e.isArchived());
    return index.query(r.query, accept, r.limit).map((hit) => ({ event: hit.event, score: hit.score }));
  }

  /** The session's index, brought up to date (with `state` when it was read before, see update). */
  private currentIndex(session: Session, state?: EventLogState | null): Promise<SessionIndex> {
    return this.updates.run(session.id, async () => {
      let index = this.indexes.get(session.id);
      if (index !== undefined && (index.owner !== session.userId || index.createdAt !== session.createdAt.getTime())) {
        // The id now names another session (deleted and created again): nothing of the old log may leak.
        index = undefined;
      }
      index ??= new SessionIndex(session.id, session.userId, session.createdAt.getTime());
      await this.update(index, state);
      this.indexes.delete(session.id);
      this.indexes.set(session.id, index);
      this.bound();
      return index;
    });
  }

  /** Least recently searched first, drops indexes until both bounds hold (the latest one always stays). */
  private bound(): void {
    let events = this.indexedEventCount();
    while (this.indexes.size > 1 && (this.indexes.size > this.maxIndexedSessions || events > this.maxIndexedEvents)) {
      const oldest = this.indexes.keys().next().value as string;
      events -= this.indexes.get(oldest)!.size;
      this.evict(oldest);
    }
  }

  private pending(map: Map<string, PendingCompaction[]>, sessionId: string): PendingCompaction[] {
    let list = map.get(sessionId);
    if (list === undefined) map.set(sessionId, (list = []));
    return list;
  }

  private async update(index: SessionIndex, read?: EventLogState | null): Promise<void> {
    const id = index.sessionId;
    // The state is read before the events: a change in between only makes the next search catch up.
    const compacted = this.compacted.delete(id);
    const compactions = this.pendingCompactions.get(id) ?? [];
    this.pendingCompactions.delete(id);
    // A state read before this update began stands for the log only while nothing of this process changed the
    // log since (a compaction or purge not yet applied) and the index is not past it (another search's update).
    const known = index.state;
    const usable =
      read !== undefined &&
      !compacted &&
      compactions.length === 0 &&
      index.unseenPurges === 0 &&
      (read === null ||
        known === null ||
        (read.version >= known.version && (read.purgeGeneration ?? 0) >= (known.purgeGeneration ?? 0)));
    const state = usable ? read : await this.logState(id);
    if (state === null) {
      index.sync((await this.readLog(id)).log, null);
      return;
    }
    // Compactions and purges of this process are applied from what they reported; anything else (another
    // process's compaction, a rewrite) shows as a version or generation the index cannot account for.
    let applied =
      known !== null &&
      !compacted &&
      compactions.every((c) => index.applyCompaction(c.archived, c.retained, c.versionBefore, known.purgeGeneration));
    if (applied && index.unseenPurges > 0) {
      // Purges of this process were applied when they happened; the generation must have moved by that many.
      const generation = index.state!.purgeGeneration;
      applied = generation !== null && state.purgeGeneration === generation + index.unseenPurges;
      if (applied) index.state = { version: index.state!.version, purgeGeneration: state.purgeGeneration };
      index.unseenPurges = 0;
    }
    const now = applied ? index.state : null;
    // A purge removes events without a version step; only a full read shows which.
    const purged = now === null || now.purgeGeneration !== state.purgeGeneration;
    if (!purged && now.version === state.version) return;
    const appended = purged ? -1 : state.version - now.version;
    if (appended > 0 && index.lastEventId !== null) {
      // Pure appends leave the last indexed event, unchanged, right before `appended` unknown ones. A
      // synthetic one among them is compaction output: a compaction in another process that put its summary
      // last takes one version step, like an append, and may have removed events (a superseded summary)
      // that the tail does not show, so only a full read tells.
      const tail = await this.service.getEvents(id, EventFilter.lastN(appended + 1));
      const added = tail.slice(1);
      if (
        tail.length === appended + 1 &&
        index.continues(tail[0]!) &&
        !added.some((e) => e.isSynthetic()) &&
        index.append(added, state)
      )
        return;
    }
    const { log, pages } = await this.readLog(id);
    // Read in several steps, the log may have changed in between: then the next search reads it again.
    const consistent = pages === 1 || sameState(state, await this.logState(id));
    index.sync(log, consistent ? state : null);
  }

  /** The whole log in pages of `readPageSize`: no single read (or reply) grows with the log. */
  private async readLog(id: string): Promise<{ log: SessionEvent[]; pages: number }> {
    const log: SessionEvent[] = [];
    const seen = new Set<string>();
    for (let page = 0; ; page++) {
      const events = await this.service.getEvents(id, EventFilter.of({ page, pageSize: this.readPageSize }));
      // A compaction between two pages can shift an event into the next one: it is kept once.
      for (const e of events) {
        if (seen.has(e.id)) continue;
        seen.add(e.id);
        log.push(e);
      }
      if (events.length < this.readPageSize) return { log, pages: page + 1 };
    }
  }

  /** The reads of `handle` when this retriever prepared it for `sessionId`; a handle gives them once. */
  private takePrepared(handle: PreparedRetrieval | undefined, sessionId: string): PreparedReads | undefined {
    if (handle === undefined || handle === null || typeof handle !== 'object') return undefined;
    const reads = this.preparations.get(handle);
    if (reads === undefined || handle.sessionId !== sessionId) return undefined;
    this.preparations.delete(handle);
    return reads;
  }

  /** The version and purge generation to compare; the version alone (generation null) from a service without the state; null without either. */
  private async logState(id: string): Promise<EventLogState | null> {
    if (this.service.getEventLogState !== undefined) return this.service.getEventLogState(id);
    if (this.service.getEventVersion !== undefined)
      return { version: await this.service.getEventVersion(id), purgeGeneration: null };
    return null;
  }
}

/** The reads a handle of Bm25Retriever.prepare started. */
interface PreparedReads {
  session: Promise<Session | null>;
  state: Promise<EventLogState | null>;
}

function sameState(a: EventLogState | null, b: EventLogState | null): boolean {
  return a !== null && b !== null && a.version === b.version && a.purgeGeneration === b.purgeGeneration;
}
