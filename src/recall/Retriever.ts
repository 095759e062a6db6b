import type { SessionEvent } from '../session/SessionEvent.js';

/** What a retriever is asked: a query over one session's log, or over all of one user's sessions. */
export interface RetrievalRequest {
  sessionId: string;
  query: string;
  /** Most hits to return; default 20. */
  limit?: number;
  /** 'session' (default): only this session. 'user': every session of `userId`. */
  scope?: 'session' | 'user';
  /** Required for scope 'user'; must come from the server side (the authenticated user), never from the model. */
  userId?: string;
  /** Also return events of the active window; default false (they are already in the prompt). */
  includeActive?: boolean;
  /** The branch the request sees: root events, its own branch and its ancestors (the recall tools' rules). */
  branch?: string | null;
  /**
   * What this retriever's `prepare(sessionId)` returned for the request's session: the reads it started are
   * used instead of being made again, once. Ignored when it came from another retriever or for another session.
   */
  prepared?: PreparedRetrieval;
}

/** What `Retriever.prepare` returns: a handle on reads already under way, to pass as `RetrievalRequest.prepared`. */
export interface PreparedRetrieval {
  /** The session whose reads were started. */
  readonly sessionId: string;
}

export interface RetrievedEvent {
  event: SessionEvent;
  score: number;
}

/** What `Retriever.retrieveWithNeighbours` returns. */
export interface RetrievedWithNeighbours {
  /** What `retrieve` returns for the same request. */
  hits: RetrievedEvent[];
  /**
   * `findEventNeighbours(request.sessionId, <ids of the hits in that session>, radius)`, read with the search;
   * null when the retriever did not read them (the caller then asks `findEventNeighbours` itself).
   */
  neighbours: SessionEvent[][] | null;
}

/**
 * Finds archived events that a request needs. Never returns an event of another user or of a branch the
 * request cannot see; an empty or blank query, or a missing session, returns [].
 */
export interface Retriever {
  retrieve(request: RetrievalRequest): Promise<RetrievedEvent[]>;
  /**
   * Optional: the events around `eventIds` in the session's log, as `EventNeighbourhoodRepository` defines it
   * (each with up to `radius` events before and after it, runs of consecutive log events that never touch).
   * ContextAssembler quotes each hit with its neighbours through it; without it, it reads the whole log per
   * request. Bm25Retriever answers from its index, RepositoryRetriever from the store's positional reads.
   */
  findEventNeighbours?(sessionId: string, eventIds: readonly string[], radius: number): Promise<SessionEvent[][]>;
  /**
   * Optional: `retrieve`, with the hits' neighbourhoods read in the same round trip where the store can
   * (RepositoryRetriever over PostgreSQL). ContextAssembler uses it when present; `neighbours` null leaves the
   * read to `findEventNeighbours`.
   */
  retrieveWithNeighbours?(request: RetrievalRequest, radius: number): Promise<RetrievedWithNeighbours>;
  /**
   * Optional: starts the reads a request for `sessionId` begins with (Bm25Retriever: the session and its log
   * state), so that a caller can overlap them with its own. ContextAssembler calls it as it reads the active
   * window: on Redis the two reads then share a round trip. The reads are as of this call; pass the handle as
   * the next request's `prepared`.
   */
  prepare?(sessionId: string): PreparedRetrieval;
}

export const DEFAULT_RETRIEVAL_LIMIT = 20;
