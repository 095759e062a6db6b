import { InvalidArgumentError, requireText } from '../errors.js';
import { SessionEvent } from '../session/SessionEvent.js';
import type { ListSessionIdsOptions } from './EnumerableRepository.js';

/** The default page size of `listSessionIds`. */
export const DEFAULT_SESSION_ID_PAGE = 500;

/** Checks the arguments of `appendEvents`: every event must be a SessionEvent of `sessionId`. */
export function requireEventsOf(sessionId: string, events: readonly SessionEvent[]): void {
  requireText(sessionId, 'sessionId');
  if (!Array.isArray(events)) throw new InvalidArgumentError('events must be an array');
  for (const e of events) {
    if (!(e instanceof SessionEvent)) throw new InvalidArgumentError('event must not be null');
    if (e.sessionId !== sessionId)
      throw new InvalidArgumentError(`event ${e.id} belongs to session ${e.sessionId}, not ${sessionId}`);
  }
}

/** The page size asked for, validated. */
export function pageLimit(options: ListSessionIdsOptions | undefined): number {
  const limit = options?.limit ?? DEFAULT_SESSION_ID_PAGE;
  if (!Number.isInteger(limit) || limit <= 0) throw new InvalidArgumentError('limit must be greater than 0');
  return limit;
}
