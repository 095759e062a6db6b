import type { SessionEvent } from '../session/SessionEvent.js';
import { hasMethods } from './hasMethods.js';

/**
 * A repository that appends a batch of one session's events in one atomic step. Import, copy and fork write
 * a whole log with one call; without it they call `appendEvent` per event.
 */
export interface BatchAppendRepository {
  /**
   * Appends events of one session in order, atomically, each with appendEvent's semantics (a repeated id is a
   * no-op and does not bump the version); returns how many were new.
   */
  appendEvents(sessionId: string, events: readonly SessionEvent[]): Promise<number>;
}

/** Whether `repository` is a BatchAppendRepository: it has every one of its methods. */
export function isBatchAppendRepository<R>(repository: R): repository is R & BatchAppendRepository {
  return hasMethods(repository, ['appendEvents']);
}
