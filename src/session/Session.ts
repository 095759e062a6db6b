import { InvalidArgumentError } from '../errors.js';
import { invalid, requireDate, requireJsonObject, requireOffsetDate, requireStorableText } from '../validation/inputs.js';

export const DEFAULT_TIME_TO_LIVE_MS = 60 * 24 * 60 * 60 * 1000;

export interface SessionInit {
  id: string;
  userId: string;
  createdAt?: Date;
  /** `undefined` → createdAt + 60 days; `null` → never expires. */
  expiresAt?: Date | null;
  metadata?: Record<string, unknown>;
}

/** Anything shaped like a session is accepted wherever a session is taken. */
export interface SessionLike {
  readonly id: string;
  readonly userId: string;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** Session metadata. It never carries events: those live in the repository's log. */
export class Session implements SessionLike {
  readonly id: string;
  readonly userId: string;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly metadata: Readonly<Record<string, unknown>>;

  private constructor(id: string, userId: string, createdAt: Date, expiresAt: Date | null, metadata: Record<string, unknown>) {
    this.id = id;
    this.userId = userId;
    this.createdAt = createdAt;
    this.expiresAt = expiresAt;
    this.metadata = Object.freeze({ ...metadata });
    Object.freeze(this);
  }

  static create(init: SessionInit): Session {
    if (init === null || init === undefined) throw new InvalidArgumentError('session must not be null');
    if (typeof init !== 'object') throw invalid('session', 'an object', init);
    const id = requireStorableText(init.id, 'id');
    const userId = requireStorableText(init.userId, 'userId');
    const createdAt =
      init.createdAt === undefined || init.createdAt === null ? new Date() : requireDate(init.createdAt, 'createdAt');
    const expiresAt =
      init.expiresAt === undefined
        ? requireOffsetDate(createdAt, DEFAULT_TIME_TO_LIVE_MS, 'the default time to live')
        : init.expiresAt === null
          ? null
          : requireDate(init.expiresAt, 'expiresAt');
    return new Session(id, userId, createdAt, expiresAt, requireJsonObject(init.metadata, 'metadata', true));
  }

  /** Normalises any session-shaped object into an immutable Session. */
  static from(like: SessionLike): Session {
    if (like instanceof Session) return like;
    if (like === null || like === undefined) throw new InvalidArgumentError('session must not be null');
    return Session.create({
      id: like.id,
      userId: like.userId,
      createdAt: like.createdAt,
      expiresAt: like.expiresAt,
      metadata: like.metadata as Record<string, unknown>,
    });
  }

  with(changes: Partial<Omit<SessionInit, 'id'>>): Session {
    return Session.create({
      id: this.id,
      userId: this.userId,
      createdAt: this.createdAt,
      expiresAt: this.expiresAt,
      metadata: { ...this.metadata },
      ...changes,
    });
  }
}
