import { InvalidArgumentError, requireText } from '../errors.js';
import { SessionEvent } from '../session/SessionEvent.js';
import { hasMethods } from './hasMethods.js';

/**
 * A repository that rewrites events in place. Redaction and the regeneration of summaries written from
 * redacted content need it; without it they throw IllegalStateError.
 */
export interface EventRewritingRepository {
  /**
   * Replaces events of the log in place, matched by id: same position, same archived flag, new content and
   * metadata. CAS: on a version mismatch nothing changes and it returns false — checked before the events,
   * so a stale batch naming an event that left the log since still just loses; otherwise the version is
   * bumped. "Session not found: <id>" / "Event not found: <eventId>" (InvalidArgumentError) change nothing.
   */
  rewriteEvents(id: string, events: readonly SessionEvent[], expectedVersion: number): Promise<boolean>;
}

/** Whether `repository` is an EventRewritingRepository: it has every one of its methods. */
export function isEventRewritingRepository<R>(repository: R): repository is R & EventRewritingRepository {
  return hasMethods(repository, ['rewriteEvents']);
}

/** Checks a rewriteEvents batch: events of session `id`, each id once. */
export function requireRewriteBatch(id: string, events: readonly SessionEvent[]): void {
  requireText(id, 'sessionId');
  if (!Array.isArray(events) || events.length === 0) throw new InvalidArgumentError('events must not be empty');
  const seen = new Set<string>();
  for (const e of events) {
    if (!(e instanceof SessionEvent)) throw new InvalidArgumentError('event must not be null');
    if (e.sessionId !== id) throw new InvalidArgumentError(`event ${e.id} belongs to session ${e.sessionId}, not ${id}`);
    if (seen.has(e.id)) throw new InvalidArgumentError(`event ${e.id} appears twice`);
    seen.add(e.id);
  }
}
