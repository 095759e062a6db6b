import { Messages, type Message } from 'session-compaction';
import type { RecordedEvent } from './RecordedSession.js';

/** A recorded event as the library's Message; a tool event becomes a one-response tool message. */
export function toMessage(event: RecordedEvent): Message {
  switch (event.role) {
    case 'user':
      return Messages.user(event.content);
    case 'system':
      return Messages.system(event.content);
    case 'assistant': {
      const calls = (event.toolCalls ?? []).map((c) => Messages.toolCall(c.id, c.name, c.arguments));
      // An assistant turn that only calls tools has no text, as in OpenAI's `content: null`.
      const text = event.content === '' && calls.length > 0 ? null : event.content;
      return Messages.assistant(text, { toolCalls: calls });
    }
    case 'tool':
      return Messages.tool([Messages.toolResponse(event.toolCallId ?? '', event.name ?? 'tool', event.content)]);
  }
}
