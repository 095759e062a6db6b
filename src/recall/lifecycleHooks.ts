import type { SessionService } from '../service/SessionService.js';
import type { SessionServiceEvents } from '../service/SessionServiceEvents.js';

/** What an in-process holder of data derived from events does when the log changes under it. */
export interface DerivedDataHandlers {
  /** The session is gone: drop everything of it; return how many entries were dropped. */
  forgetSession(sessionId: string): number;
  /** These events were rewritten in place (redaction, regenerated summary) or purged by retention. */
  forgetEvents(sessionId: string, eventIds: readonly string[]): void;
  /** These archived events were purged by retention (default: `forgetEvents`). */
  forgetPurged?(sessionId: string, eventIds: readonly string[]): void;
}

/**
 * Subscribes a retriever's caches to the service's data-lifecycle events (sessionErased, eventsRewritten,
 * eventsPurged), so that an erased or redacted text does not live on in an index or a cache. `kind` names the
 * entries in the erasure report's `derived` counts. Returns the unsubscribe function (a no-op for a service
 * without `events`: such a service's erasures are only seen when an index is rebuilt).
 */
export function subscribeToLifecycle(service: SessionService, kind: string, handlers: DerivedDataHandlers): () => void {
  const events = (service as { events?: SessionServiceEvents }).events;
  if (events === undefined) return () => undefined;
  const off = [
    events.on('sessionErased', ({ sessionId, forgotten }) => forgotten(kind, handlers.forgetSession(sessionId))),
    events.on('eventsRewritten', ({ sessionId, eventIds }) => handlers.forgetEvents(sessionId, eventIds)),
    events.on('eventsPurged', ({ sessionId, eventIds }) =>
      (handlers.forgetPurged ?? handlers.forgetEvents).call(handlers, sessionId, eventIds),
    ),
  ];
  return () => off.forEach((unsubscribe) => unsubscribe());
}
