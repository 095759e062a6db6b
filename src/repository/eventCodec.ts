import { InvalidArgumentError } from '../errors.js';
import { isMessageType, type Message, type MessageType } from '../session/Message.js';
import { SessionEvent } from '../session/SessionEvent.js';

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
}

export function encodeEvent(event: SessionEvent, archived = event.archived): StoredEvent {
  const m = event.message;
  let data: MessageData | null = null;
  if (m.type === 'assistant' && ((m.toolCalls?.length ?? 0) > 0 || m.reasoning !== undefined)) {
    data = {};
    if ((m.toolCalls?.length ?? 0) > 0) data.toolCalls = m.toolCalls;
    if (m.reasoning !== undefined) data.reasoning = m.reasoning;
  } else if (m.type === 'tool') {
    data = { responses: m.responses };
  }
  return {
    id: event.id,
    sessionId: event.sessionId,
    timestamp: event.timestamp.getTime(),
    messageType: m.type,
    text: event.text,
    data: data === null ? null : JSON.stringify(data),
    synthetic: event.isSynthetic(),
    archived,
    branch: event.branch,
    metadata: JSON.stringify(event.metadata),
  };
}

export function decodeEvent(row: StoredEvent): SessionEvent {
  if (!isMessageType(row.messageType))
    throw new InvalidArgumentError(`corrupt event ${row.id}: unknown message type ${String(row.messageType)}`);
  const data = (row.data === null || row.data === undefined ? {} : JSON.parse(row.data)) as MessageData;
  let message: Message;
  switch (row.messageType) {
    case 'user':
    case 'system':
      message = { type: row.messageType, text: row.text ?? '' };
      break;
    case 'assistant':
      message = {
        type: 'assistant',
        text: row.text,
        ...(Array.isArray(data.toolCalls) && data.toolCalls.length > 0 ? { toolCalls: data.toolCalls } : {}),
        ...(typeof data.reasoning === 'string' ? { reasoning: data.reasoning } : {}),
      } as Message;
      break;
    case 'tool':
      message = { type: 'tool', responses: Array.isArray(data.responses) ? data.responses : [] } as Message;
      break;
  }
  const metadata = (row.metadata ? JSON.parse(row.metadata) : {}) as Record<string, unknown>;
  return SessionEvent.create({
    id: row.id,
    sessionId: row.sessionId,
    timestamp: new Date(Number(row.timestamp)),
    message,
    metadata,
    branch: row.branch ?? null,
    archived: row.archived,
  });
}

/** Escapes LIKE wildcards so that a user's `%` or `_` matches itself; pair with `ESCAPE '\\'`. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => '\\' + c);
}
