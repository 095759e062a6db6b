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

export function formatMessage(message: Message, options?: FormatOptions): string {
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
          ? `Assistant: ${text} [tool calls: ${rendered}]${reasoning}`
          : `Assistant [tool calls: ${rendered}]${reasoning}`;
      }
      return (message.text === null ? 'Assistant: [no text content]' : `Assistant: ${message.text}`) + reasoning;
    }
    case 'tool':
      return `Tool [responses: ${message.responses.map((r) => `${r.name} -> ${r.responseData}`).join(', ')}]`;
    default: {
      const text = (message as { text: string | null }).text;
      return text === null || text === undefined ? `${ROLE[message.type]}: [no text content]` : `${ROLE[message.type]}: ${text}`;
    }
  }
}
