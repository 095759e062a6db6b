import type { Message } from '../../session/Message.js';

/** Tool results in a context whose call is not earlier in that same context: a provider rejects these. */
export function orphanedToolResults(messages: readonly Message[]): number {
  const calls = new Set<string>();
  let orphans = 0;
  for (const m of messages) {
    if (m.type === 'assistant') for (const c of m.toolCalls ?? []) calls.add(c.id);
    else if (m.type === 'tool') for (const r of m.responses) if (!calls.has(r.id)) orphans++;
  }
  return orphans;
}
