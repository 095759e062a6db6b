import { METADATA_MASKED_FROM } from '../../compaction/coverage.js';
import { EventFilter } from '../../filter/EventFilter.js';
import { isEventNeighbourhoodRepository } from '../../repository/EventNeighbourhoodRepository.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
import type { SessionEvent } from '../../session/SessionEvent.js';

/**
 * The archived originals of the masked copies in `window`, so that a summariser reads the full tool output
 * rather than the excerpt. A store that reads events by position reads just those (SQLite, PostgreSQL); any
 * other reads the whole log, and only when the window holds a copy.
 */
export async function maskedOriginals(
  repository: SessionRepository,
  sessionId: string,
  window: readonly SessionEvent[],
): Promise<SessionEvent[]> {
  const wanted = new Set<string>();
  for (const e of window) {
    const from = e.metadata[METADATA_MASKED_FROM];
    if (typeof from === 'string') wanted.add(from);
  }
  if (wanted.size === 0) return [];
  if (isEventNeighbourhoodRepository(repository)) {
    return (await repository.findEventNeighbours(sessionId, [...wanted], 0)).flat().filter((e) => wanted.has(e.id));
  }
  return (await repository.findEvents(sessionId, EventFilter.all())).filter((e) => wanted.has(e.id));
}
