import { parseMessage } from './parseMessage.js';

export type MessageType = 'user' | 'assistant' | 'system' | 'tool';

export const MESSAGE_TYPES: readonly MessageType[] = Object.freeze(['user', 'assistant', 'system', 'tool']);

export interface ToolCall {
  id: string;
  type: 'function';
  name: string;
  arguments: string;
}

export interface ToolResponse {
  id: string;
  name: string;
  responseData: string;
}

export interface UserMessage {
  type: 'user';
  text: string;
}
export interface SystemMessage {
  type: 'system';
  text: string;
}
export interface AssistantMessage {
  type: 'assistant';
  text: string | null;
  toolCalls?: ToolCall[];
  reasoning?: string;
}
export interface ToolMessage {
  type: 'tool';
  responses: ToolResponse[];
}

export type Message = UserMessage | SystemMessage | AssistantMessage | ToolMessage;

export function isMessageType(value: unknown): value is MessageType {
  return typeof value === 'string' && (MESSAGE_TYPES as readonly string[]).includes(value);
}

/**
 * The searchable text of a message: what keyword, pattern and `containsText` filters look at.
 * Tool responses have no text (as in the Java design, where a tool message's text is empty);
 * their payload is reachable through `responses`.
 */
export function messageText(message: Message): string | null {
  switch (message.type) {
    case 'user':
    case 'system':
      return message.text;
    case 'assistant':
      return message.text;
    case 'tool':
      return null;
  }
}

export function hasToolCalls(message: Message): boolean {
  return message.type === 'assistant' && (message.toolCalls?.length ?? 0) > 0;
}

/** Validated, deep-frozen copy so that events holding a message are truly immutable (see parseMessage). */
export function freezeMessage(message: Message): Message {
  return parseMessage(message, 'message');
}

/** Factories for the four message kinds. */
export const Messages = Object.freeze({
  user(text: string): UserMessage {
    return { type: 'user', text };
  },
  system(text: string): SystemMessage {
    return { type: 'system', text };
  },
  assistant(text: string | null, options: { toolCalls?: ToolCall[]; reasoning?: string } = {}): AssistantMessage {
    const message: AssistantMessage = { type: 'assistant', text };
    if (options.toolCalls !== undefined && options.toolCalls.length > 0) message.toolCalls = options.toolCalls;
    if (options.reasoning !== undefined) message.reasoning = options.reasoning;
    return message;
  },
  tool(responses: ToolResponse[]): ToolMessage {
    return { type: 'tool', responses };
  },
  toolCall(id: string, name: string, args: string): ToolCall {
    return { id, type: 'function', name, arguments: args };
  },
  toolResponse(id: string, name: string, responseData: string): ToolResponse {
    return { id, name, responseData };
  },
});
