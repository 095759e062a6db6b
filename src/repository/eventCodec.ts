import {
  isMessageType,
  type AssistantMessage,
  type Message,
  type MessageType,
  type ToolCall,
  type ToolResponse,
} from '../session/Message.js';
import { markMalformed } from '../session/malformedEvents.js';
import { restoreSessionEvent, type SessionEvent } from '../session/SessionEvent.js';
import { CorruptedRecordError } from '../errors.js';
import { describeType } from '../validation/inputs.js';
import { decodeStoredText, encodeStoredText, mapJsonStrings, TEXT_ESCAPE } from './storedText.js';

/**
 * The storage form of an event shared by every durable backend: the text goes to its own column (so stores
 * can search it), the structured rest (tool calls, tool responses, reasoning) to `data` as JSON.
 */
export interface StoredEvent {
  id: string;
  sessionId: string;
  /** Milliseconds since the epoch. */
  timestamp: number;
  messageType: MessageType;
  /** The searchable text (EventFilter keyword/pattern), null when the message has none. */
  text: string | null;
  /** JSON of the non-text parts, or null. */
  data: string | null;
  synthetic: boolean;
  archived: boolean;
  branch: string | null;
  /** JSON object. */
  metadata: string;
}

interface MessageData {
  toolCalls?: unknown;
  responses?: unknown;
  reasoning?: string;
  /** The participant's name (user and assistant messages): in `data`, so no store needed a new column. */
  name?: string;
}

/** JSON.stringify escapes NUL and unpaired surrogates as \u0000 / \udxxx, which jsonb refuses: encode those strings. */
const JSON_NEEDS_ENCODING = /\\u0000|\\ud[89a-f]|\uFDD0/i;

function storedJson(value: unknown): string {
  const json = JSON.stringify(value);
  return JSON_NEEDS_ENCODING.test(json) ? JSON.stringify(mapJsonStrings(value, encodeStoredText)) : json;
}

export function encodeEvent(event: SessionEvent, archived = event.archived): StoredEvent {
  const m = event.message;
  let data: MessageData | null = null;
  if (m.type === 'assistant' && ((m.toolCalls?.length ?? 0) > 0 || m.reasoning !== undefined || m.name !== undefined)) {
    data = {};
    if ((m.toolCalls?.length ?? 0) > 0) data.toolCalls = m.toolCalls;
    if (m.reasoning !== undefined) data.reasoning = m.reasoning;
    if (m.name !== undefined) data.name = m.name;
  } else if (m.type === 'user' && m.name !== undefined) {
    // The stores' full-text indexes hold the text and the string values of `data`: the name is searchable there too.
    data = { name: m.name };
  } else if (m.type === 'tool') {
    data = { responses: m.responses };
  }
  return {
    id: event.id,
    sessionId: event.sessionId,
    timestamp: event.timestamp.getTime(),
    messageType: m.type,
    text: event.text === null ? null : encodeStoredText(event.text),
    data: data === null ? null : storedJson(data),
    synthetic: event.isSynthetic(),
    archived,
    branch: event.branch,
    metadata: storedJson(event.metadata),
  };
}

/**
 * Rebuilds an event from its stored form. Never throws on what an older release may have stored: a text
 * that is not a string reads as no text, JSON of the wrong shape as empty, malformed tool calls or responses
 * are left out — so filters, search and compaction keep working on the session — and each such repair is
 * recorded for the coverage verifier (`malformedProblems`). Bytes that are not JSON at all were never written
 * by any release: that row is corrupted, and reading it throws `CorruptedRecordError` naming the session and
 * the event (silently reading `{}` would turn a summary into a real event or drop a pin).
 */
export function decodeEvent(row: StoredEvent): SessionEvent {
  // No closures here: every read of a window or a recall neighbourhood decodes hundreds of rows.
  const problems: string[] = [];
  const type: MessageType = isMessageType(row.messageType) ? row.messageType : 'assistant';
  if (type !== row.messageType) problems.push(`unknown message type ${describeType(row.messageType)} ${String(row.messageType)}`);
  const data = parseJsonObject(row.data, 'data', row, problems);
  const text = typeof row.text === 'string' ? decodeStoredText(row.text) : null;
  if (text === null && row.text !== null && row.text !== undefined) problems.push(`text was ${describeType(row.text)}`);
  const name = typeof data.name === 'string' && data.name !== '' ? data.name : undefined;
  if (data.name !== undefined && name === undefined) problems.push(`name was ${describeType(data.name)}`);
  let message: Message;
  switch (type) {
    case 'user':
    case 'system':
      if (row.text === null || row.text === undefined) problems.push('text missing');
      message = type === 'user' && name !== undefined ? { type, text: text ?? '', name } : { type, text: text ?? '' };
      break;
    case 'assistant': {
      const toolCalls = salvageList(data.toolCalls, 'toolCalls', isToolCall, problems).map((c): ToolCall => ({
        id: c.id,
        type: 'function',
        name: c.name,
        arguments: c.arguments,
      }));
      const assistant: AssistantMessage = { type: 'assistant', text };
      if (toolCalls.length > 0) assistant.toolCalls = toolCalls;
      if (typeof data.reasoning === 'string') assistant.reasoning = data.reasoning;
      else if (data.reasoning !== undefined) problems.push(`reasoning was ${describeType(data.reasoning)}`);
      if (name !== undefined) assistant.name = name;
      message = assistant;
      break;
    }
    case 'tool':
      if (data.responses === undefined) problems.push('tool message without responses');
      message = {
        type: 'tool',
        responses: salvageList(data.responses, 'responses', isToolResponse, problems).map((r) => ({
          id: r.id,
          name: r.name,
          responseData: r.responseData,
        })),
      };
      break;
  }
  let timestamp = new Date(Number(row.timestamp));
  if (Number.isNaN(timestamp.getTime())) {
    problems.push(`timestamp was ${describeType(row.timestamp)}`);
    timestamp = new Date(0);
  }
  const branch = typeof row.branch === 'string' ? row.branch : null;
  if (row.branch !== null && row.branch !== undefined && branch === null) problems.push(`branch was ${describeType(row.branch)}`);
  const event = restoreSessionEvent({
    id: String(row.id),
    sessionId: String(row.sessionId),
    timestamp,
    message: Object.freeze(message),
    metadata: parseJsonObject(row.metadata, 'metadata', row, problems),
    branch,
    archived: row.archived === true,
  });
  return markMalformed(event, problems);
}

function parseJsonObject(json: unknown, field: string, row: StoredEvent, problems: string[]): Record<string, unknown> {
  // '{}' is what most events store as metadata.
  if (json === null || json === undefined || json === '' || json === '{}') return {};
  let value: unknown = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json);
    } catch (cause) {
      throw new CorruptedRecordError(
        { sessionId: String(row.sessionId), eventId: String(row.id), field, problem: 'is not JSON' },
        { cause },
      );
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`${field} was ${describeType(value)}, not an object`);
    return {};
  }
  if (typeof json === 'string' && json.includes(TEXT_ESCAPE))
    return mapJsonStrings(value, decodeStoredText) as Record<string, unknown>;
  return value as Record<string, unknown>;
}

function salvageList<T>(value: unknown, field: string, ok: (item: unknown) => item is T, problems: string[]): T[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push(`${field} was ${describeType(value)}, not an array`);
    return [];
  }
  const kept = value.filter(ok);
  if (kept.length < value.length) problems.push(`${value.length - kept.length} malformed ${field} left out`);
  return kept;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// An empty id is a valid one (parseMessage accepts it; providers without call ids send none), so it is kept.
function isToolCall(v: unknown): v is ToolCall {
  return isRecord(v) && typeof v.id === 'string' && typeof v.name === 'string' && typeof v.arguments === 'string';
}

function isToolResponse(v: unknown): v is ToolResponse {
  return isRecord(v) && typeof v.id === 'string' && typeof v.name === 'string' && typeof v.responseData === 'string';
}

/** Escapes LIKE wildcards so that a user's `%` or `_` matches itself; pair with `ESCAPE '\\'`. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => '\\' + c);
}
