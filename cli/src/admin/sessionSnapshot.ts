import { EventFilter, type SessionRepository, type Session, type SessionEvent } from 'session-compaction';

/** A session, its whole log (archived included) and the version the log was read at. */
export interface SessionSnapshot {
  session: Session;
  version: number;
  events: SessionEvent[];
  /** False when writes kept changing the version while it was read: the log may mix two states. */
  stable: boolean;
}

const ATTEMPTS = 5;

/**
 * Reads version, log, version again, and retries while they disagree, so a snapshot of a session that is being
 * written to is still one consistent state. Null when the session does not exist.
 */
export async function readSnapshot(repository: SessionRepository, sessionId: string): Promise<SessionSnapshot | null> {
  let last: SessionSnapshot | null = null;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const session = await repository.findById(sessionId);
    if (session === null) return null;
    const version = await repository.getEventVersion(sessionId);
    const events = await repository.findEvents(sessionId, EventFilter.all());
    const after = await repository.getEventVersion(sessionId);
    last = { session, version, events, stable: after === version };
    if (last.stable) return last;
  }
  return last;
}
