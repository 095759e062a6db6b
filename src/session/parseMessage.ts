import { InvalidArgumentError } from '../errors.js';
import { describeType, invalid, requireString } from '../validation/inputs.js';
import { MESSAGE_TYPES, type AssistantMessage, type Message, type ToolCall, type ToolResponse } from './Message.js';

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
export function parseMessage(value: unknown, field = 'message'): Message {
  if (value === null || value === undefined) throw new InvalidArgumentError(`${field} must not be null`);
  const m = requireObject(value, field);
  switch (m.type) {
    case 'user':
    case 'system':
      return Object.freeze({ type: m.type, text: requireString(m.text, `${field}.text`) });
    case 'assistant': {
      const copy: AssistantMessage = {
        type: 'assistant',
        text: m.text === undefined || m.text === null ? null : requireString(m.text, `${field}.text`),
      };
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
        `unknown message type: ${String(typeof m.type === 'string' ? m.type : describeType(m.type))} (${field}.type must be one of ${MESSAGE_TYPES.join(', ')})`,
      );
  }
}
