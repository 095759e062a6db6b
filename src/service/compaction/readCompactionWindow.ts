import { CompactionRequest } from '../../compaction/CompactionRequest.js';
import { InvalidArgumentError } from '../../errors.js';
import { EventFilter } from '../../filter/EventFilter.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
import { maskedOriginals } from './maskedOriginals.js';

/** The active window a compaction works on, and the version it must commit against. */
export interface CompactionWindow {
  version: number;
  request: CompactionRequest;
}

/**
 * Reads the session's active window for a compaction or a preview: "Session not found: <id>" when missing;
 * the version is read BEFORE the events, so that any append after it makes the CAS write fail; archived
 * events are never re-processed. Masked copies come with their archived originals.
 */
export async function readCompactionWindow(repository: SessionRepository, sessionId: string): Promise<CompactionWindow> {
  const session = await repository.findById(sessionId);
  if (session === null) throw new InvalidArgumentError(`Session not found: ${sessionId}`);
  const version = await repository.getEventVersion(sessionId);
  const events = await repository.findEvents(sessionId, EventFilter.active());
  const originals = await maskedOriginals(repository, sessionId, events);
  return { version, request: CompactionRequest.of(session, events, { originals }) };
}
