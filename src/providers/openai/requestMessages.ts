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
 * The messages of this request that are persisted: its trailing user and tool messages — the new user
 * message, or the tool results the request answers with (and a user message sent along with them, which may
 * also bring a late result for a call the user moved on from). Each run of tool messages is folded into one
 * tool message (OpenAI sends one message per call; the log keeps the Java shape, one message holding every
 * response). Empty when the request ends with neither.
 */
export function messagesToPersist(
  messages: readonly ChatCompletionMessageParam[],
  resolveToolName: (callId: string) => string | undefined,
): Message[] {
  let first = messages.length;
  while (first > 0 && (messages[first - 1]!.role === 'user' || messages[first - 1]!.role === 'tool')) first--;
  const out: Message[] = [];
  let responses: ToolResponse[] = [];
  const fold = () => {
    if (responses.length > 0) out.push(Messages.tool(responses));
    responses = [];
  };
  for (const m of messages.slice(first)) {
    const converted = fromOpenAIMessage(m, { resolveToolName });
    if (converted.type === 'tool') responses.push(...converted.responses);
    else {
      fold();
      out.push(converted);
    }
  }
  fold();
  return out;
}
