import { InvalidArgumentError, Messages, type Message, type ToolResponse, Session, SessionEvent } from 'session-compaction';
import { toMessage, validateRecordedDataset, type RecordedEvent, type RecordedSession } from 'session-compaction-bench';
import type { SessionSnapshot } from './sessionSnapshot.js';

/**
 * One exported event: a neutral recorded event (role, content, toolCalls, toolCallId, name, timestamp) plus
 * what makes the export lossless. A reader of the neutral format ignores the extra fields.
 */
export interface ExportedEvent extends RecordedEvent {
  id: string;
  archived?: boolean;
  branch?: string;
  metadata?: Record<string, unknown>;
  reasoning?: string;
  /** Tool messages with other than exactly one response. */
  responses?: { toolCallId: string; name: string; content: string }[];
  /** Assistant text is null though the neutral mapping would read `content` as text (or the reverse). */
  textNull?: boolean;
}

/** One line of an export file: a neutral recorded session plus the session's owner, dates and version. */
export interface ExportedSession extends RecordedSession {
  userId: string;
  createdAt: string;
  expiresAt: string | null;
  /** The CAS version at export; an import raises the target's version to at least this. */
  version: number;
  events: ExportedEvent[];
}

function exportEvent(e: SessionEvent): ExportedEvent {
  const m = e.message;
  const out: ExportedEvent = { id: e.id, role: m.type, content: '' };
  switch (m.type) {
    case 'user':
    case 'system':
      out.content = m.text;
      break;
    case 'assistant': {
      const calls = m.toolCalls ?? [];
      out.content = m.text ?? '';
      if (calls.length > 0) out.toolCalls = calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
      // toMessage reads '' with tool calls as null, and anything else as text: record where that is wrong.
      const neutralReadsNull = out.content === '' && calls.length > 0;
      if ((m.text === null) !== neutralReadsNull) out.textNull = m.text === null;
      if (m.reasoning !== undefined) out.reasoning = m.reasoning;
      break;
    }
    case 'tool': {
      const first = m.responses[0];
      out.content = first?.responseData ?? '';
      out.toolCallId = first?.id || 'none';
      out.name = first?.name ?? 'tool';
      if (m.responses.length !== 1)
        out.responses = m.responses.map((r) => ({ toolCallId: r.id, name: r.name, content: r.responseData }));
      break;
    }
  }
  out.timestamp = e.timestamp.toISOString();
  if (e.archived) out.archived = true;
  if (e.branch !== null) out.branch = e.branch;
  if (Object.keys(e.metadata).length > 0) out.metadata = { ...e.metadata };
  return out;
}

export function exportSession(snapshot: SessionSnapshot): ExportedSession {
  const s = snapshot.session;
  const line: ExportedSession = {
    sessionId: s.id,
    userId: s.userId,
    createdAt: s.createdAt.toISOString(),
    expiresAt: s.expiresAt === null ? null : s.expiresAt.toISOString(),
    version: snapshot.version,
    events: snapshot.events.map(exportEvent),
  };
  if (Object.keys(s.metadata).length > 0) line.meta = { ...s.metadata };
  return line;
}

function importMessage(e: ExportedEvent): Message {
  if (e.role === 'tool' && Array.isArray(e.responses)) {
    const responses: ToolResponse[] = e.responses.map((r) => Messages.toolResponse(r.toolCallId, r.name, r.content));
    return Messages.tool(responses);
  }
  const message = toMessage(e);
  if (message.type !== 'assistant') return message;
  const text = e.textNull === true ? null : e.textNull === false ? e.content : message.text;
  return Messages.assistant(text, {
    ...(message.toolCalls !== undefined ? { toolCalls: message.toolCalls } : {}),
    ...(typeof e.reasoning === 'string' ? { reasoning: e.reasoning } : {}),
  });
}

export interface ImportDefaults {
  /** Owner of sessions whose line has no userId (plain recorded sessions). */
  userId: string;
  /** Creation time of sessions whose line has none. */
  now: Date;
}

/**
 * A parsed line (an exported session, or a plain neutral recorded session) as a snapshot to write. Events
 * without an id get `<sessionId>-<index>`, so importing the same plain file twice is still idempotent.
 */
export function importSession(value: unknown, defaults: ImportDefaults): SessionSnapshot {
  const [recorded] = validateRecordedDataset([value], 'import').sessions;
  const line = value as Partial<ExportedSession> & RecordedSession;
  const userId = typeof line.userId === 'string' && line.userId.trim() !== '' ? line.userId : defaults.userId;
  const createdAt = parseDate(line.createdAt, `${recorded!.sessionId}.createdAt`) ?? defaults.now;
  const expiresAt =
    line.expiresAt === null || line.expiresAt === undefined
      ? null
      : parseDate(line.expiresAt, `${recorded!.sessionId}.expiresAt`);
  const session = Session.create({ id: line.sessionId, userId, createdAt, expiresAt, metadata: line.meta ?? {} });
  const events = (line.events as ExportedEvent[]).map((e, i) =>
    SessionEvent.create({
      sessionId: session.id,
      id: typeof e.id === 'string' && e.id !== '' ? e.id : `${session.id}-${i}`,
      message: importMessage(e),
      timestamp: parseDate(e.timestamp, `${session.id}.events[${i}].timestamp`) ?? new Date(createdAt.getTime() + i),
      metadata: e.metadata ?? {},
      branch: typeof e.branch === 'string' ? e.branch : null,
      archived: e.archived === true,
    }),
  );
  const version =
    typeof line.version === 'number' && Number.isInteger(line.version) && line.version >= 0 ? line.version : events.length;
  return { session, version, events, stable: true };
}

function parseDate(value: unknown, what: string): Date | null {
  if (value === undefined || value === null) return null;
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw new InvalidArgumentError(`${what} must be an ISO-8601 date (got ${JSON.stringify(value)})`);
  return new Date(ms);
}
