import type { CompactionResult } from '../compaction/CompactionResult.js';
import { IllegalStateError, InvalidArgumentError, requireText } from '../errors.js';
import { EventFilter } from '../filter/EventFilter.js';
import type { SessionRepository } from '../repository/SessionRepository.js';
import { SessionEvent } from '../session/SessionEvent.js';

/** Attempts before a pin gives up under constant concurrent writes. */
const MAX_PIN_ATTEMPTS = 10;

/**
 * Sets or clears `metadata.pinned` on an active event. The copy replaces the event in place through one
 * CAS write (`compactEvents` with nothing archived), so a concurrent append or compaction is never lost:
 * on a lost race the window is read again and the pin retried. Returns the event as stored.
 */
export async function setPinned(
  repository: SessionRepository,
  sessionId: string,
  eventId: string,
  pinned: boolean,
): Promise<SessionEvent> {
  requireText(sessionId, 'sessionId');
  requireText(eventId, 'eventId');
  if ((await repository.findById(sessionId)) === null) throw new InvalidArgumentError(`Session not found: ${sessionId}`);
  for (let attempt = 0; attempt < MAX_PIN_ATTEMPTS; attempt++) {
    const version = await repository.getEventVersion(sessionId);
    const window = await repository.findEvents(sessionId, EventFilter.active());
    const index = window.findIndex((e) => e.id === eventId);
    if (index < 0) {
      const archived = (await repository.findEvents(sessionId, EventFilter.all())).some((e) => e.id === eventId);
      if (archived) throw new IllegalStateError(`Event is archived: ${eventId} (revert the compaction that archived it first)`);
      throw new InvalidArgumentError(`Event not found: ${eventId}`);
    }
    const event = window[index]!;
    if (event.isSynthetic()) throw new IllegalStateError(`A synthetic event cannot be pinned: ${eventId}`);
    if (event.isPinned() === pinned) return event;
    const metadata: Record<string, unknown> = { ...event.metadata };
    if (pinned) metadata[SessionEvent.METADATA_PINNED] = true;
    else delete metadata[SessionEvent.METADATA_PINNED];
    const copy = event.with({ metadata });
    const next = [...window];
    next[index] = copy;
    if (await repository.compactEvents(sessionId, [], next, version)) return copy;
  }
  throw new IllegalStateError(`Could not pin ${eventId}: the session kept changing (${MAX_PIN_ATTEMPTS} attempts)`);
}

/** `event` with `pinned: true` when `pinSystemMessages` applies to it and it does not say otherwise. */
export function withDefaultPin(event: SessionEvent, pinSystemMessages: boolean): SessionEvent {
  if (!pinSystemMessages || event.messageType !== 'system' || event.isSynthetic()) return event;
  if (event.metadata[SessionEvent.METADATA_PINNED] !== undefined) return event;
  return event.with({ metadata: { ...event.metadata, [SessionEvent.METADATA_PINNED]: true } });
}

/** The pinned events of `window` that `result` would archive or drop (none for a well-behaved strategy). */
export function pinnedEventsLost(window: readonly SessionEvent[], result: CompactionResult): SessionEvent[] {
  const kept = new Set(result.compactedEvents.map((e) => e.id));
  return window.filter((e) => e.isPinned() && !kept.has(e.id));
}
