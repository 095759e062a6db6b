import { Messages, type Message } from 'session-compaction';
import type { RecordedEvent } from './RecordedSession.js';

/**
 * A recorded event as the library's Message; a tool event becomes a one-response tool message. A user or
 * assistant event's `name` (a LoCoMo speaker) becomes the message's `name`, as an integration passes the author
 * of each turn.
 */
export function toMessage(event: RecordedEvent): Message {
  const name = event.name !== undefined ? { name: event.name } : {};
  switch (event.role) {
    case 'user':
      return Messages.user(event.content, name);
    case 'system':
      return Messages.system(event.content);
    case 'assistant': {
      const calls = (event.toolCalls ?? []).map((c) => Messages.toolCall(c.id, c.name, c.arguments));
      // An assistant turn that only calls tools has no text, as in OpenAI's `content: null`.
      const text = event.content === '' && calls.length > 0 ? null : event.content;
      return Messages.assistant(text, { toolCalls: calls, ...name });
    }
    case 'tool':
      return Messages.tool([Messages.toolResponse(event.toolCallId ?? '', event.name ?? 'tool', event.content)]);
  }
}

/** The event without its speaker (a tool event keeps its tool's name): a replay as if no author was passed. */
export function withoutSpeaker(event: RecordedEvent): RecordedEvent {
  if (event.role === 'tool' || event.name === undefined) return event;
  const { name: _name, ...rest } = event;
  return rest;
}
