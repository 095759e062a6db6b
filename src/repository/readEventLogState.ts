import { isEventLogStateRepository, type EventLogState } from './EventLogStateRepository.js';
import type { SessionRepository } from './SessionRepository.js';

/**
 * The session's event-log state from any repository: `getEventLogState` of an EventLogStateRepository, else
 * the version alone with a null purge generation (an archive purge is then not seen). `id` must already be
 * validated.
 */
export async function readEventLogState(
  repository: Pick<SessionRepository, 'getEventVersion'>,
  id: string,
): Promise<EventLogState> {
  if (isEventLogStateRepository(repository)) return repository.getEventLogState(id);
  return { version: await repository.getEventVersion(id), purgeGeneration: null };
}
