import { InvalidArgumentError } from '../errors.js';
import { describeType, invalid, requireParticipantName, requireString } from '../validation/inputs.js';

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
  /**
   * Who wrote it, when a conversation has several participants (OpenAI's `name`): rendered and searched
   * with the text ("Caroline (user): …"), so recall finds a person's turns. See `requireParticipantName`.
   */
  name?: string;
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
  /** The participant who wrote it (OpenAI's `name`), as on `UserMessage`. */
  name?: string;
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
 * Tool responses have no text (a tool message's text is empty);
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

function requireObject(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(field, 'an object', value);
  return value as Record<string, unknown>;
}

function requireArray(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw invalid(field, 'an array', value);
  return value;
}

function parseToolCall(value: unknown, field: string): ToolCall {
  const c = requireObject(value, field);
  if (c.type !== undefined && c.type !== 'function') throw invalid(`${field}.type`, "'function'", c.type);
  return Object.freeze({
    id: requireString(c.id, `${field}.id`),
    type: 'function' as const,
    name: requireString(c.name, `${field}.name`),
    arguments: requireString(c.arguments, `${field}.arguments`),
  });
}

function parseToolResponse(value: unknown, field: string): ToolResponse {
  const r = requireObject(value, field);
  return Object.freeze({
    id: requireString(r.id, `${field}.id`),
    name: requireString(r.name, `${field}.name`),
    responseData: requireString(r.responseData, `${field}.responseData`),
  });
}

/**
 * Checks a message from any caller (plain JavaScript, JSON) and returns a deep-frozen copy holding only the
 * fields of its kind. Its strings are content: any string, stored exactly (see the text policy in
 * validation/inputs.ts). Errors name the field
 * and the type received, e.g. "message.toolCalls[0].arguments must be a string (got object)".
 */
export function parseMessage(value: unknown, field: string): Message {
  if (value === null || value === undefined) throw new InvalidArgumentError(`${field} must not be null`);
  const m = requireObject(value, field);
  switch (m.type) {
    case 'user': {
      const copy: UserMessage = { type: 'user', text: requireString(m.text, `${field}.text`) };
      if (m.name !== undefined && m.name !== null) copy.name = requireParticipantName(m.name, `${field}.name`);
      return Object.freeze(copy);
    }
    case 'system':
      return Object.freeze({ type: m.type, text: requireString(m.text, `${field}.text`) });
    case 'assistant': {
      const copy: AssistantMessage = {
        type: 'assistant',
        text: m.text === undefined || m.text === null ? null : requireString(m.text, `${field}.text`),
      };
      if (m.name !== undefined && m.name !== null) copy.name = requireParticipantName(m.name, `${field}.name`);
      if (m.toolCalls !== undefined && m.toolCalls !== null) {
        const calls = requireArray(m.toolCalls, `${field}.toolCalls`).map((c, i) => parseToolCall(c, `${field}.toolCalls[${i}]`));
        if (calls.length > 0) copy.toolCalls = Object.freeze(calls) as ToolCall[];
      }
      if (m.reasoning !== undefined && m.reasoning !== null) copy.reasoning = requireString(m.reasoning, `${field}.reasoning`);
      return Object.freeze(copy);
    }
    case 'tool': {
      const responses = requireArray(m.responses, `${field}.responses`).map((r, i) =>
        parseToolResponse(r, `${field}.responses[${i}]`),
      );
      return Object.freeze({ type: 'tool', responses: Object.freeze(responses) as ToolResponse[] });
    }
    default:
      throw new InvalidArgumentError(
        `unknown message type: ${String(typeof m.type === 'string' ? m.type : describeType(m.type))} (${field}.type must be one of user, assistant, system, tool)`,
      );
  }
}

/** The participant who wrote a message, when it names one (user and assistant messages only). */
export function messageName(message: Message): string | undefined {
  return message.type === 'user' || message.type === 'assistant' ? message.name : undefined;
}

/** Validated, deep-frozen copy so that events holding a message are truly immutable (see parseMessage). */
export function freezeMessage(message: Message): Message {
  return parseMessage(message, 'message');
}

/** Factories for the four message kinds. */
export const Messages = Object.freeze({
  /** A user message; `options.name` names its author when the conversation has several participants. */
  user(text: string, options: { name?: string } = {}): UserMessage {
    const message: UserMessage = { type: 'user', text };
    if (options?.name !== undefined) message.name = options.name;
    return message;
  },
  system(text: string): SystemMessage {
    return { type: 'system', text };
  },
  /**
   * An assistant message; `options` is `{ toolCalls?, reasoning? }` or the tool calls themselves
   * (`Messages.assistant(null, [call])`, what a caller writing the calls first expects: they used to be dropped).
   * `options.name` names the participant who wrote it.
   */
  assistant(
    text: string | null,
    options: { toolCalls?: ToolCall[]; reasoning?: string; name?: string } | ToolCall[] = {},
  ): AssistantMessage {
    if (options === null || typeof options !== 'object') {
      throw new InvalidArgumentError(`options must be an object or an array of tool calls, got ${describeType(options)}`);
    }
    const { toolCalls, reasoning, name } = Array.isArray(options)
      ? { toolCalls: options, reasoning: undefined, name: undefined }
      : options;
    const message: AssistantMessage = { type: 'assistant', text };
    if (toolCalls !== undefined && toolCalls.length > 0) message.toolCalls = toolCalls;
    if (reasoning !== undefined) message.reasoning = reasoning;
    if (name !== undefined) message.name = name;
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
