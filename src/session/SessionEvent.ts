import { randomUUID } from 'node:crypto';
import { InvalidArgumentError, requireText } from '../errors.js';
import { freezeMessage, hasToolCalls, messageText, type Message, type MessageType } from './Message.js';

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

  private constructor(init: Required<Omit<SessionEventInit, 'metadata'>> & { metadata: EventMetadata }) {
    this.id = init.id;
    this.sessionId = init.sessionId;
    this.timestamp = init.timestamp;
    this.message = init.message;
    this.metadata = init.metadata;
    this.branch = init.branch;
    this.archived = init.archived;
    Object.freeze(this);
  }

  static create(init: SessionEventInit): SessionEvent {
    if (init === null || init === undefined) throw new InvalidArgumentError('event must not be null');
    const id = init.id === undefined ? randomUUID() : requireText(init.id, 'id');
    const sessionId = requireText(init.sessionId, 'sessionId');
    if (init.message === null || init.message === undefined) {
      throw new InvalidArgumentError('message must not be null');
    }
    if (init.timestamp !== undefined && !(init.timestamp instanceof Date && !Number.isNaN(init.timestamp.getTime()))) {
      throw new InvalidArgumentError('timestamp must be a valid Date');
    }
    const branch = init.branch ?? null;
    if (branch !== null && typeof branch !== 'string') throw new InvalidArgumentError('branch must be a string or null');
    return new SessionEvent({
      id,
      sessionId,
      // Copy so that a caller mutating its Date cannot change the event afterwards.
      timestamp: new Date((init.timestamp ?? new Date()).getTime()),
      message: freezeMessage(init.message),
      metadata: Object.freeze({ ...(init.metadata ?? {}) }),
      branch,
      archived: init.archived === true,
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
