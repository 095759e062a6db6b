import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { fromOpenAIMessage } from './OpenAIMessages.js';
import { Messages, type Message, type ToolResponse } from '../../session/Message.js';
import type { SessionEvent } from '../../session/SessionEvent.js';

/** Recovers tool names for OpenAI tool messages (which carry only the call id) from earlier tool calls. */
export function toolNameResolver(
  history: readonly SessionEvent[],
  requestMessages: readonly ChatCompletionMessageParam[],
): (callId: string) => string | undefined {
  const names = new Map<string, string>();
  for (const e of history) {
    if (e.message.type === 'assistant') for (const c of e.message.toolCalls ?? []) names.set(c.id, c.name);
  }
  for (const m of requestMessages) {
    if (m.role !== 'assistant') continue;
    for (const c of m.tool_calls ?? []) if (c.type === 'function') names.set(c.id, c.function.name);
  }
  return (callId) => names.get(callId);
}

/**
 * The message of this request that is persisted: the most recent user message, or — when the request answers
 * tool calls — the trailing run of tool messages folded into one tool message (OpenAI sends one message per
 * call; the log keeps the Java shape, one message holding every response). Null when there is neither.
 */
export function messageToPersist(
  messages: readonly ChatCompletionMessageParam[],
  resolveToolName: (callId: string) => string | undefined,
): Message | null {
  let last = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    const role = messages[i]!.role;
    if (role === 'user' || role === 'tool') {
      last = i;
      break;
    }
  }
  if (last < 0) return null;
  const lastMessage = messages[last]!;
  if (lastMessage.role === 'user') return fromOpenAIMessage(lastMessage);
  let first = last;
  while (first > 0 && messages[first - 1]!.role === 'tool') first--;
  const responses: ToolResponse[] = [];
  for (const m of messages.slice(first, last + 1)) {
    const converted = fromOpenAIMessage(m, { resolveToolName });
    if (converted.type === 'tool') responses.push(...converted.responses);
  }
  return Messages.tool(responses);
}
