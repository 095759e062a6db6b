import { InvalidArgumentError } from '../errors.js';
import { Session, type SessionLike } from '../session/Session.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { countTurns } from '../session/turns.js';

/** What a trigger and a strategy see: the session and its active window, in log order. */
export class CompactionRequest {
  readonly session: Session;
  readonly events: readonly SessionEvent[];
  /** All events of the window, synthetic included. */
  readonly currentEventCount: number;
  /** Root, non-synthetic user events: the turns. */
  readonly currentTurnCount: number;

  private constructor(session: Session, events: readonly SessionEvent[]) {
    this.session = session;
    this.events = Object.freeze([...events]);
    this.currentEventCount = events.length;
    this.currentTurnCount = countTurns(events);
    Object.freeze(this);
  }

  static of(session: SessionLike, events: readonly SessionEvent[]): CompactionRequest {
    if (session === null || session === undefined) throw new InvalidArgumentError('session must not be null');
    if (events === null || events === undefined) throw new InvalidArgumentError('events must not be null');
    return new CompactionRequest(Session.from(session), events);
  }
}

/** Strategies reject a missing request with the same message. */
export function requireRequest(request: CompactionRequest | null | undefined): CompactionRequest {
  if (request === null || request === undefined) throw new InvalidArgumentError('request must not be null');
  return request;
}
