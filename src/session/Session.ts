import { InvalidArgumentError, requireText } from '../errors.js';

export const DEFAULT_TIME_TO_LIVE_MS = 60 * 24 * 60 * 60 * 1000;

export interface SessionInit {
  id: string;
  userId: string;
  createdAt?: Date;
  /** `undefined` → createdAt + 60 days (as the Java builder); `null` → never expires. */
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
    const id = requireText(init.id, 'id');
    const userId = requireText(init.userId, 'userId');
    const createdAt = new Date((init.createdAt ?? new Date()).getTime());
    const expiresAt =
      init.expiresAt === undefined
        ? new Date(createdAt.getTime() + DEFAULT_TIME_TO_LIVE_MS)
        : init.expiresAt === null
          ? null
          : new Date(init.expiresAt.getTime());
    return new Session(id, userId, createdAt, expiresAt, init.metadata ?? {});
  }

  /** Normalises any session-shaped object into an immutable Session. */
  static from(like: SessionLike): Session {
    if (like instanceof Session) return like;
    return Session.create({
      id: like.id,
      userId: like.userId,
      createdAt: like.createdAt,
      expiresAt: like.expiresAt,
      metadata: { ...like.metadata },
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
