import type { EventLogState, SessionRepository } from './SessionRepository.js';

/**
 * The session's event-log state from any repository: `getEventLogState` where it has one, else the version
 * alone with a null purge generation (a custom repository without the method; an archive purge is then not
 * seen). `id` must already be validated.
 */
export async function readEventLogState(
  repository: Pick<SessionRepository, 'getEventVersion' | 'getEventLogState'>,
  id: string,
): Promise<EventLogState> {
  if (repository.getEventLogState !== undefined) return repository.getEventLogState(id);
  return { version: await repository.getEventVersion(id), purgeGeneration: null };
}
