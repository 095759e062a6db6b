import type { SessionEvent } from '../session/SessionEvent.js';

const QUOTE_LIMIT = 300;

function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= QUOTE_LIMIT ? flat : `${flat.slice(0, QUOTE_LIMIT - 1)}…`;
}

/**
 * A summary written without a model (a metadata stub): who said how much, which tools
 * ran how often, and the first and last user requests quoted. It keeps the context shrinking while the
 * model is down; it does not carry the content of the answers.
 */
export function mechanicalSummary(events: readonly SessionEvent[], priorSummaries: readonly string[] = []): string {
  const counts = { user: 0, assistant: 0, system: 0, tool: 0 };
  const tools = new Map<string, number>();
  const userRequests: string[] = [];
  for (const e of events) {
    counts[e.message.type] += 1;
    if (e.message.type === 'assistant') {
      for (const call of e.message.toolCalls ?? []) tools.set(call.name, (tools.get(call.name) ?? 0) + 1);
    }
    if (e.message.type === 'user' && e.message.text.trim() !== '') userRequests.push(e.message.text);
  }
  const lines: string[] = [];
  if (priorSummaries.length > 0) lines.push('Earlier summary:', ...priorSummaries, '');
  lines.push(
    `[Mechanical summary: the summarizer was unavailable, so this records only the shape of ${events.length} earlier events.]`,
    `Messages: ${counts.user} from the user, ${counts.assistant} from the assistant, ${counts.tool} tool results` +
      (counts.system > 0 ? `, ${counts.system} system messages.` : '.'),
  );
  if (tools.size > 0) {
    const sorted = [...tools.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    lines.push(`Tools called: ${sorted.map(([name, n]) => `${name} ×${n}`).join(', ')}.`);
  }
  const first = userRequests[0];
  const last = userRequests[userRequests.length - 1];
  if (first !== undefined) lines.push(`First user request: "${clip(first)}"`);
  if (last !== undefined && userRequests.length > 1) lines.push(`Last user request: "${clip(last)}"`);
  return lines.join('\n');
}
