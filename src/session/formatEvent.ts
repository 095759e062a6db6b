import type { Message } from './Message.js';
import type { SessionEvent } from './SessionEvent.js';

const ROLE = { user: 'User', assistant: 'Assistant', system: 'System', tool: 'Tool' } as const;

/**
 * The one text rendering of an event, used both to count tokens (triggers, strategies) and to build
 * summarisation prompts, so that what is counted is what is sent. Tool calls and responses are rendered
 * in full: counting them as 0 tokens would make a token trigger under-fire on tool-heavy sessions.
 */
export function formatEvent(event: SessionEvent, options?: FormatOptions): string {
  return formatMessage(event.message, options);
}

export interface FormatOptions {
  /**
   * Render an assistant message's reasoning too, as ` [reasoning: …]` at the end. For counting only, when
   * reasoning is sent back to the provider (see `toOpenAIMessages`' `reasoning` option); default false.
   */
  reasoning?: boolean;
}

/**
 * How an entry starts: the role, or for a message that names its participant the name with the role after it
 * (`Caroline (user)`): the reader sees who spoke, search finds the name, and no name passes for a role.
 */
function speaker(message: Message): string {
  const name = message.type === 'user' || message.type === 'assistant' ? message.name : undefined;
  return name === undefined ? ROLE[message.type] : `${name} (${message.type})`;
}

export function formatMessage(message: Message, options?: FormatOptions): string {
  const who = speaker(message);
  switch (message.type) {
    case 'assistant': {
      const reasoning =
        typeof options === 'object' && options?.reasoning === true && message.reasoning !== undefined && message.reasoning !== ''
          ? ` [reasoning: ${message.reasoning}]`
          : '';
      const calls = message.toolCalls ?? [];
      if (calls.length > 0) {
        const rendered = calls.map((c) => `${c.name}(${c.arguments})`).join(', ');
        const text = message.text;
        return text !== null && text.trim() !== ''
          ? `${who}: ${text} [tool calls: ${rendered}]${reasoning}`
          : `${who} [tool calls: ${rendered}]${reasoning}`;
      }
      return (message.text === null ? `${who}: [no text content]` : `${who}: ${message.text}`) + reasoning;
    }
    case 'tool':
      return `Tool [responses: ${message.responses.map((r) => `${r.name} -> ${r.responseData}`).join(', ')}]`;
    default: {
      const text = (message as { text: string | null }).text;
      return text === null || text === undefined ? `${who}: [no text content]` : `${who}: ${text}`;
    }
  }
}
