import type { Message } from './Message.js';

/** A tool response in a context whose call is not earlier in that same context: a provider rejects it. */
export interface OrphanedToolResponse {
  /** Index of the tool message in the given sequence. */
  index: number;
  toolCallId: string;
}

/** Every tool response in `messages` whose call is not earlier in the same sequence, in order. */
export function orphanedToolResponses(messages: readonly Message[]): OrphanedToolResponse[] {
  const calls = new Set<string>();
  const orphans: OrphanedToolResponse[] = [];
  messages.forEach((m, index) => {
    if (m.type === 'assistant') for (const c of m.toolCalls ?? []) calls.add(c.id);
    else if (m.type === 'tool') for (const r of m.responses) if (!calls.has(r.id)) orphans.push({ index, toolCallId: r.id });
  });
  return orphans;
}
