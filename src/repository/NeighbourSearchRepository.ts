import type { SessionEvent } from '../session/SessionEvent.js';
import { hasMethods } from './hasMethods.js';
import type { EventSearchOptions, ScoredEvent, SearchableRepository } from './SearchableRepository.js';

/** A search's hits with the neighbourhoods of those in the searched session (see NeighbourSearchRepository). */
export interface ScoredEventsWithNeighbours {
  /** What `searchEvents` returns for the same arguments. */
  hits: ScoredEvent[];
  /** As `EventNeighbourhoodRepository.findEventNeighbours` returns them: runs in log order that never touch. */
  neighbours: SessionEvent[][];
}

/**
 * A searchable repository that reads the hits' neighbourhoods in the statement that searches (PostgreSQL):
 * recall quotes each hit with the events around it, and this makes the two reads one round trip.
 */
export interface NeighbourSearchRepository extends SearchableRepository {
  /**
   * `searchEvents(sessionId, query, options)`, and `findEventNeighbours(sessionId, ids, radius)` for the ids of
   * the hits that belong to `sessionId` — from one snapshot. `radius` is an integer in [0, MAX_NEIGHBOUR_RADIUS].
   */
  searchEventsWithNeighbours(
    sessionId: string,
    query: string,
    options: EventSearchOptions | undefined,
    radius: number,
  ): Promise<ScoredEventsWithNeighbours>;
}

/** Whether `repository` is a NeighbourSearchRepository: it has every one of its methods. */
export function isNeighbourSearchRepository<R>(repository: R): repository is R & NeighbourSearchRepository {
  return hasMethods(repository, ['searchEvents', 'searchEventsWithNeighbours']);
}
