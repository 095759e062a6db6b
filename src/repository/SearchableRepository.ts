import type { SessionEvent } from '../session/SessionEvent.js';
import { hasMethods } from './hasMethods.js';

/**
 * Which events `searchEvents` may return. The defaults describe a prompt being built for one session:
 * its archive (the active window is already in the prompt), root events only.
 */
export interface EventSearchOptions {
  /** Most hits to return, best first; default 20. */
  limit?: number;
  /** 'session' (default): only the given session. 'user': every session of `userId`. */
  scope?: 'session' | 'user';
  /**
   * The owner of the session, from server-side state (the authenticated user), never from a model. Required
   * for scope 'user'. When set, a session that belongs to someone else yields no hits.
   */
  userId?: string;
  /** Also return events of the given session's active window; default false. Other sessions are searched whole. */
  includeActive?: boolean;
  /**
   * The branch the caller sees: root events, its own branch and its dot-path ancestors, never siblings or
   * children. Unset or null: root events only.
   */
  branch?: string | null;
}

/** A search hit: higher `score` is more relevant; scores compare only within one result list. */
export interface ScoredEvent {
  event: SessionEvent;
  score: number;
}

/** A repository with a full-text index of its own; without one, retrievers rank in process. */
export interface SearchableRepository {
  /**
   * Full-text search pushed down to the store's own index, best first (ties in log order). A blank query, a
   * missing session or another user's session returns []. Words are matched whole and case-insensitively,
   * any of them (more matches rank higher); the query is never interpreted as search syntax, so quotes,
   * operators and wildcards in it are plain text.
   */
  searchEvents(sessionId: string, query: string, options?: EventSearchOptions): Promise<ScoredEvent[]>;
}

/** Whether `repository` is a SearchableRepository: it has every one of its methods. */
export function isSearchableRepository<R>(repository: R): repository is R & SearchableRepository {
  return hasMethods(repository, ['searchEvents']);
}
