import type { Message } from './Message.js';
import type { SessionEvent } from './SessionEvent.js';

const ROLE = { user: 'User', assistant: 'Assistant', system: 'System', tool: 'Tool' } as const;

/**
 * The one text rendering of an event, used both to count tokens (triggers, strategies) and to build
 * summarisation prompts, so that what is counted is what is sent. Tool calls and responses are rendered
 * in full: counting them as 0 tokens made the Java trigger under-fire on tool-heavy sessions (its #30).
 */
export function formatEvent(event: SessionEvent): string {
  return formatMessage(event.message);
}

export function formatMessage(message: Message): string {
  switch (message.type) {
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      if (calls.length > 0) {
        const rendered = calls.map((c) => `${c.name}(${c.arguments})`).join(', ');
        const text = message.text;
        return text !== null && text.trim() !== ''
          ? `Assistant: ${text} [tool calls: ${rendered}]`
          : `Assistant [tool calls: ${rendered}]`;
      }
      return message.text === null ? 'Assistant: [no text content]' : `Assistant: ${message.text}`;
    }
    case 'tool':
      return `Tool [responses: ${message.responses.map((r) => `${r.name} -> ${r.responseData}`).join(', ')}]`;
    default: {
      const text = (message as { text: string | null }).text;
      return text === null || text === undefined ? `${ROLE[message.type]}: [no text content]` : `${ROLE[message.type]}: ${text}`;
    }
  }
}
