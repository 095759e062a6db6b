import { randomUUID } from 'node:crypto';
import { InvalidArgumentError } from '../errors.js';
import {
  describeType,
  invalid,
  optionalBoolean,
  requireDate,
  requireJsonObject,
  requireStorableString,
  requireStorableText,
} from '../validation/inputs.js';
import { hasToolCalls, messageText, parseMessage, type Message, type MessageType } from './Message.js';

export type EventMetadata = Readonly<Record<string, unknown>>;

export interface SessionEventInit {
  sessionId: string;
  message: Message;
  id?: string;
  timestamp?: Date;
  metadata?: Record<string, unknown>;
  branch?: string | null;
  archived?: boolean;
}

type EventFields = Required<Omit<SessionEventInit, 'metadata'>> & { metadata: EventMetadata };

let construct: (fields: EventFields) => SessionEvent;

/**
 * One entry of a session's append-only log. Immutable: every "change" (archiving) is a copy.
 * Equality is identity of (id, sessionId), so an archived copy equals its original.
 */
export class SessionEvent {
  static readonly METADATA_SYNTHETIC = 'synthetic';
  static readonly METADATA_COMPACTION_SOURCE = 'compactionSource';
  /** `metadata.pinned === true`: no compaction archives, masks or summarises the event away. */
  static readonly METADATA_PINNED = 'pinned';

  readonly id: string;
  readonly sessionId: string;
  readonly timestamp: Date;
  readonly message: Message;
  readonly metadata: EventMetadata;
  readonly branch: string | null;
  readonly archived: boolean;

  static {
    construct = (fields) => new SessionEvent(fields);
  }

  private constructor(init: EventFields) {
    this.id = init.id;
    this.sessionId = init.sessionId;
    this.timestamp = init.timestamp;
    this.message = init.message;
    this.metadata = init.metadata;
    this.branch = init.branch;
    this.archived = init.archived;
    Object.freeze(this);
  }

  /**
   * Validates every field (callers are often plain JavaScript or JSON) and copies what it keeps: the message
   * (only the fields of its kind, deep-frozen), the timestamp and the metadata (JSON values only). Stored
   * strings follow the text policy: no NUL, no unpaired surrogate. Errors are InvalidArgumentError naming
   * the field and the type received.
   */
  static create(init: SessionEventInit): SessionEvent {
    if (init === null || init === undefined) throw new InvalidArgumentError('event must not be null');
    if (typeof init !== 'object') throw invalid('event', 'an object', init);
    const id = init.id === undefined ? randomUUID() : requireStorableText(init.id, 'id');
    const sessionId = requireStorableText(init.sessionId, 'sessionId');
    const message = parseMessage(init.message, 'message');
    const timestamp = init.timestamp === undefined ? new Date() : requireDate(init.timestamp, 'timestamp');
    const branch = init.branch === undefined || init.branch === null ? null : init.branch;
    if (branch !== null && typeof branch !== 'string') {
      throw new InvalidArgumentError(`branch must be a string or null (got ${describeType(branch)})`);
    }
    return construct({
      id,
      sessionId,
      timestamp,
      message,
      metadata: Object.freeze(requireJsonObject(init.metadata, 'metadata')),
      branch: branch === null ? null : requireStorableString(branch, 'branch'),
      archived: optionalBoolean(init.archived, 'archived') === true,
    });
  }

  get messageType(): MessageType {
    return this.message.type;
  }

  /** The searchable text (null for tool responses and text-less assistant messages). */
  get text(): string | null {
    return messageText(this.message);
  }

  isSynthetic(): boolean {
    return this.metadata[SessionEvent.METADATA_SYNTHETIC] === true;
  }

  /** Pinned events stay in the active window whatever the strategy (see `SessionService.pinEvent`). */
  isPinned(): boolean {
    return this.metadata[SessionEvent.METADATA_PINNED] === true;
  }

  isRootEvent(): boolean {
    return this.branch === null;
  }

  isArchived(): boolean {
    return this.archived;
  }

  asArchived(): SessionEvent {
    return this.archived ? this : this.with({ archived: true });
  }

  hasToolCalls(): boolean {
    return hasToolCalls(this.message);
  }

  equals(other: unknown): boolean {
    return other instanceof SessionEvent && other.id === this.id && other.sessionId === this.sessionId;
  }

  /** A copy with some fields replaced; the message and metadata are re-frozen. */
  with(changes: Partial<Omit<SessionEventInit, 'sessionId'>>): SessionEvent {
    return SessionEvent.create({
      id: this.id,
      sessionId: this.sessionId,
      timestamp: this.timestamp,
      message: this.message,
      metadata: { ...this.metadata },
      branch: this.branch,
      archived: this.archived,
      ...changes,
    });
  }
}

/**
 * Rebuilds an event read back from a store, as it was stored: no text policy and no metadata check, since
 * rows written by an older release may not meet today's rules and must still be readable. The message must
 * already be well-formed (the codec salvages it). For repositories only; not part of the package root.
 */
export function restoreSessionEvent(fields: {
  id: string;
  sessionId: string;
  timestamp: Date;
  message: Message;
  metadata: Record<string, unknown>;
  branch: string | null;
  archived: boolean;
}): SessionEvent {
  return construct({ ...fields, metadata: Object.freeze({ ...fields.metadata }) });
}
