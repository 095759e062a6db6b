import { Messages, SessionEvent } from 'session-compaction';
import { event } from './fixtures.js';

/** An assistant message calling `name` with call id `id` (optionally with text and reasoning). */
export const call = (id: string, name = 'bash', args = '{"command":"ls"}', text: string | null = null, reasoning?: string) =>
  event(
    Messages.assistant(text, {
      toolCalls: [Messages.toolCall(id, name, args)],
      ...(reasoning !== undefined ? { reasoning } : {}),
    }),
  );

/** The tool message answering call `id`. */
export const result = (id: string, data: string, name = 'bash') => event(Messages.tool([Messages.toolResponse(id, name, data)]));

export const long = (label: string, n = 2000) => `${label}:` + 'x'.repeat(n);

/** Tool response data of a tool event. */
export const data = (e: SessionEvent) =>
  e.message.type === 'tool' ? e.message.responses.map((r) => r.responseData).join('|') : '';

/** Every tool response in `events` answers a call issued earlier in `events`. */
export function toolPairsIntact(events: readonly SessionEvent[]): boolean {
  const issued = new Set<string>();
  for (const e of events) {
    const m = e.message;
    if (m.type === 'assistant') for (const c of m.toolCalls ?? []) issued.add(c.id);
    if (m.type === 'tool') for (const r of m.responses) if (!issued.has(r.id)) return false;
  }
  return true;
}
