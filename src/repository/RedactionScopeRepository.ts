import type { SessionEvent } from '../session/SessionEvent.js';
import { hasMethods } from './hasMethods.js';

/**
 * A repository that reads what a redaction of one event needs, instead of the whole log: `redactEvent` of one
 * event in a 200,000-event log then decodes a handful of events, not all of them. Without it the redaction
 * reads the whole log.
 */
export interface RedactionScopeRepository {
  /**
   * In log order: the event `eventId`, the original it stands for when it is a masked copy
   * (`metadata.maskedFrom`), every masked copy of that original, and every synthetic event of the session
   * (the summaries that may quote it). [] when the event is not in the log.
   */
  findRedactionScope(id: string, eventId: string): Promise<SessionEvent[]>;
}

/** Whether `repository` is a RedactionScopeRepository: it has every one of its methods. */
export function isRedactionScopeRepository<R>(repository: R): repository is R & RedactionScopeRepository {
  return hasMethods(repository, ['findRedactionScope']);
}

/** The metadata key of a masked copy's original (METADATA_MASKED_FROM of the compaction layer). */
export const MASKED_FROM = 'maskedFrom';

/**
 * The events of `log` (in order) that `findRedactionScope(…, eventId)` returns: the one rule every store
 * follows (a store may read a superset and narrow it with this).
 */
export function redactionScopeOf(log: readonly SessionEvent[], eventId: string): SessionEvent[] {
  const target = log.find((e) => e.id === eventId);
  if (target === undefined) return [];
  const from = target.metadata[MASKED_FROM];
  const root = typeof from === 'string' ? from : target.id;
  return log.filter((e) => e.id === eventId || e.id === root || e.metadata[MASKED_FROM] === root || e.isSynthetic());
}
