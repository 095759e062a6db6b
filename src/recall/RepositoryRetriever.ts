import { InvalidArgumentError, requireText } from '../errors.js';
import { isSearchableRepository, type EventSearchOptions, type ScoredEvent } from '../repository/SearchableRepository.js';
import { isNeighbourSearchRepository } from '../repository/NeighbourSearchRepository.js';
import {
  isEventNeighbourhoodRepository,
  positionalNeighbourRuns,
  requireNeighbourRequest,
} from '../repository/EventNeighbourhoodRepository.js';
import { EventFilter } from '../filter/EventFilter.js';
import type { SessionRepository } from '../repository/SessionRepository.js';
import { DefaultSessionService } from '../service/DefaultSessionService.js';
import type { SessionService } from '../service/SessionService.js';
import { accessDenied } from '../service/sessionAccess.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { visibleTo } from './access.js';
import { Bm25Retriever } from './Bm25Retriever.js';
import type { PreparedRetrieval, RetrievalRequest, RetrievedEvent, RetrievedWithNeighbours, Retriever } from './Retriever.js';
import { normaliseRetrievalRequest, type NormalisedRetrievalRequest } from './retrievalRequest.js';

export interface RepositoryRetrieverOptions {
  repository: SessionRepository;
  /**
   * Answers when the repository has no `searchEvents` (in-memory, Redis, most custom repositories). Default:
   * a `Bm25Retriever` over the same repository, which indexes in this process and follows the log's version.
   */
  fallback?: Retriever;
  /**
   * The application's service, for the default fallback: its index then hears the service's erasures and
   * redactions at once (see SessionServiceEvents) instead of at its next search.
   */
  sessionService?: SessionService;
}

/**
 * Full-text retrieval pushed down to the repository's own index (`searchEvents`: SQLite FTS5, PostgreSQL
 * full-text search), so nothing is loaded or indexed in this process; a repository without it (in-memory,
 * Redis) is served by `fallback`, in-process BM25 by default. The access rules are the other retrievers': a session of another user is refused with the
 * access-denied error, and every hit is checked again against the request's scope, owner, branch and active
 * window, so a custom repository's `searchEvents` cannot widen what a request sees.
 */
export class RepositoryRetriever implements Retriever {
  private readonly repository: SessionRepository;
  private readonly fallback: Retriever;

  constructor(options: RepositoryRetrieverOptions) {
    if (options === null || options === undefined || options.repository === null || options.repository === undefined) {
      throw new InvalidArgumentError('repository must not be null');
    }
    this.repository = options.repository;
    this.fallback =
      options.fallback ??
      new Bm25Retriever({ sessionService: options.sessionService ?? new DefaultSessionService(this.repository) });
  }

  /**
   * The fallback's `prepare` where requests go to it (see Retriever.prepare); a store that searches itself
   * starts nothing ahead, and its requests ignore the handle.
   */
  prepare(sessionId: string): PreparedRetrieval {
    const id = requireText(sessionId, 'sessionId');
    if (!isSearchableRepository(this.repository) && typeof this.fallback.prepare === 'function') return this.fallback.prepare(id);
    return Object.freeze({ sessionId: id });
  }

  /** True when requests go to the repository's index rather than to the fallback. */
  get pushesDown(): boolean {
    return isSearchableRepository(this.repository);
  }

  async retrieve(request: RetrievalRequest): Promise<RetrievedEvent[]> {
    const r = normaliseRetrievalRequest(request);
    if (r.query.trim() === '') return [];
    if (!isSearchableRepository(this.repository)) return this.fallback.retrieve(request);
    await this.requireAccess(r);
    const hits = await this.repository.searchEvents(r.sessionId, r.query, searchOptions(r));
    return this.permitted(hits, r);
  }

  /**
   * `retrieve`, and the neighbourhoods of its hits in the request's session read by the same statement when the
   * store can (NeighbourSearchRepository: PostgreSQL) — one round trip instead of two. Otherwise, or when the
   * access rules dropped a hit the store returned (its neighbourhood would then be read too), `neighbours` is
   * null and the caller reads them with `findEventNeighbours`.
   */
  async retrieveWithNeighbours(request: RetrievalRequest, radius: number): Promise<RetrievedWithNeighbours> {
    requireNeighbourRequest([], radius);
    const r = normaliseRetrievalRequest(request);
    if (r.query.trim() === '' || !isNeighbourSearchRepository(this.repository)) {
      return { hits: await this.retrieve(request), neighbours: null };
    }
    await this.requireAccess(r);
    const found = await this.repository.searchEventsWithNeighbours(r.sessionId, r.query, searchOptions(r), radius);
    const hits = await this.permitted(found.hits, r);
    const dropped =
      found.hits.filter((h) => h.event.sessionId === r.sessionId).length !==
      hits.filter((h) => h.event.sessionId === r.sessionId).length;
    return { hits, neighbours: dropped ? null : found.neighbours };
  }

  /**
   * The events around `eventIds` (see Retriever.findEventNeighbours): the store's positional reads when it has
   * them (SQLite, PostgreSQL), else the fallback's (Bm25Retriever's index), else the whole log read once.
   */
  async findEventNeighbours(sessionId: string, eventIds: readonly string[], radius: number): Promise<SessionEvent[][]> {
    const ids = requireNeighbourRequest(eventIds, radius);
    if (isEventNeighbourhoodRepository(this.repository)) return this.repository.findEventNeighbours(sessionId, ids, radius);
    if (typeof this.fallback.findEventNeighbours === 'function') return this.fallback.findEventNeighbours(sessionId, ids, radius);
    const log = await this.repository.findEvents(sessionId, EventFilter.all());
    const at = new Map(log.map((e, i) => [e.id, i]));
    const positions = ids.flatMap((id) => at.get(id) ?? []);
    return positionalNeighbourRuns(positions, radius, log.length, (i) => log[i]!);
  }

  /** A request naming a user may only search that user's session. */
  private async requireAccess(r: NormalisedRetrievalRequest): Promise<void> {
    if (r.userId === null) return;
    const session = await this.repository.findById(r.sessionId);
    if (session !== null && session.userId !== r.userId) throw accessDenied(r.sessionId, r.userId);
  }

  /** The store's hits the request may see, at most `limit` (see allowedBy and ownedSessions). */
  private async permitted(hits: readonly ScoredEvent[], r: NormalisedRetrievalRequest): Promise<RetrievedEvent[]> {
    const allowed = allowedBy(r);
    const visible = hits.filter((h) => allowed(h.event));
    const owned = await this.ownedSessions(
      visible.map((h) => h.event.sessionId),
      r,
    );
    return visible
      .filter((h) => owned(h.event.sessionId))
      .slice(0, r.limit)
      .map((h) => ({ event: h.event, score: h.score }));
  }

  /** Which of the hits' sessions the request may read: the user's own (in scope 'user', checked one by one). */
  private async ownedSessions(sessionIds: string[], r: NormalisedRetrievalRequest): Promise<(id: string) => boolean> {
    if (r.userId === null) return () => true;
    const others = [...new Set(sessionIds)].filter((id) => id !== r.sessionId);
    const sessions = await Promise.all(others.map((id) => this.repository.findById(id)));
    const owned = new Set([r.sessionId, ...others.filter((_, i) => sessions[i]?.userId === r.userId)]);
    return (id) => owned.has(id);
  }
}

function searchOptions(r: NormalisedRetrievalRequest): EventSearchOptions {
  return {
    limit: r.limit,
    scope: r.scope,
    ...(r.userId !== null ? { userId: r.userId } : {}),
    includeActive: r.includeActive,
    branch: r.branch,
  };
}

/** The request's scope, branch and active-window rules, as every retriever applies them. */
function allowedBy(r: NormalisedRetrievalRequest): (event: SessionEvent) => boolean {
  const visible = visibleTo(r.branch);
  return (e) =>
    visible(e) &&
    (r.scope === 'user' || e.sessionId === r.sessionId) &&
    // Active events are already in the prompt of the request's own session; other sessions' never are.
    (r.includeActive || e.archived || e.sessionId !== r.sessionId);
}
