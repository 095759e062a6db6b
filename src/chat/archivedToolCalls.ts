import { EventFilter } from '../filter/EventFilter.js';
import type { SessionService } from '../service/SessionService.js';
import { Messages, messageName, type Message, type ToolCall } from '../session/Message.js';
import type { SessionEvent } from '../session/SessionEvent.js';

/**
 * The window with the calls its results answer brought back from the archive. Compaction never archives a
 * call still waiting for its result, but it may archive one the user moved on from; when that call's result
 * comes late after all, the result would stand without its call — refused by every provider, and never seen
 * by the model. Each such call comes back, right before the first result answering it (or, for a result the
 * request brings, at the end of the window), holding only the calls whose results are there: a late real
 * result always reaches the model with its call, and a read never gives a result without one. Reads the whole
 * log only when the window (or `incomingResults`) holds a result whose call is not before it.
 */
export async function withArchivedCalls(
  service: Pick<SessionService, 'getEvents'>,
  sessionId: string,
  window: readonly SessionEvent[],
  incomingResults: readonly string[] = [],
): Promise<SessionEvent[]> {
  const called = new Set<string>();
  const missing = new Set<string>();
  for (const e of window) {
    const m = e.message;
    if (m.type === 'assistant') for (const c of m.toolCalls ?? []) called.add(c.id);
    else if (m.type === 'tool') for (const r of m.responses) if (!called.has(r.id)) missing.add(r.id);
  }
  for (const id of incomingResults) if (!called.has(id)) missing.add(id);
  if (missing.size === 0) return [...window];
  const archived = new Map<string, { event: SessionEvent; call: ToolCall }>();
  for (const e of await service.getEvents(sessionId, EventFilter.all())) {
    if (!e.archived || e.message.type !== 'assistant') continue;
    for (const call of e.message.toolCalls ?? []) if (missing.has(call.id)) archived.set(call.id, { event: e, call });
  }
  if (archived.size === 0) return [...window];
  const recovered = new Set<string>();
  /** The archived event with only the calls being recovered (its other calls may have results nowhere near). */
  const recover = (ids: readonly string[]): SessionEvent[] => {
    const byEvent = new Map<SessionEvent, ToolCall[]>();
    for (const id of ids) {
      const found = archived.get(id);
      if (found === undefined || recovered.has(id)) continue;
      recovered.add(id);
      byEvent.set(found.event, [...(byEvent.get(found.event) ?? []), found.call]);
    }
    return [...byEvent].map(([event, calls]) =>
      calls.length === (event.message.type === 'assistant' ? (event.message.toolCalls ?? []).length : 0)
        ? event
        : event.with({ message: Messages.assistant(null, { toolCalls: calls, ...nameOf(event.message) }) }),
    );
  };
  const out: SessionEvent[] = [];
  for (const e of window) {
    if (e.message.type === 'tool') out.push(...recover(e.message.responses.map((r) => r.id).filter((id) => missing.has(id))));
    out.push(e);
  }
  out.push(...recover(incomingResults.filter((id) => missing.has(id))));
  return out;
}

/** The participant's name of a message, as `Messages.assistant` options: a recovered call keeps its author. */
function nameOf(message: Message): { name?: string } {
  const name = messageName(message);
  return name === undefined ? {} : { name };
}
