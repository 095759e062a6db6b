import { InvalidArgumentError } from '../errors.js';
import { Session, type SessionLike } from '../session/Session.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { countTurns } from '../session/turns.js';
import { METADATA_MASKED_FROM } from './coverage.js';

export interface CompactionRequestOptions {
  /**
   * Original events of the masked copies in `events` (by the original's id), so that summarisers read what
   * was actually said, not the excerpt that stands in the window. The service and the pipeline fill it.
   */
  originals?: Iterable<SessionEvent>;
  /** Extra instructions for a summary written by this compaction (from `beforeCompaction` hooks). */
  instructions?: readonly string[];
}

/** What a trigger and a strategy see: the session and its active window, in log order. */
export class CompactionRequest {
  readonly session: Session;
  readonly events: readonly SessionEvent[];
  /** All events of the window, synthetic included. */
  readonly currentEventCount: number;
  /** Root, non-synthetic user events: the turns. */
  readonly currentTurnCount: number;
  /** Known originals of masked copies, by id (see `originalOf`). */
  readonly originals: ReadonlyMap<string, SessionEvent>;
  /** Extra instructions for a summary written by this compaction; summarising strategies add them. */
  readonly instructions: readonly string[];

  private constructor(
    session: Session,
    events: readonly SessionEvent[],
    originals: ReadonlyMap<string, SessionEvent>,
    instructions: readonly string[],
  ) {
    this.session = session;
    this.events = Object.freeze([...events]);
    this.currentEventCount = events.length;
    this.currentTurnCount = countTurns(events);
    this.originals = originals;
    this.instructions = Object.freeze([...instructions]);
    Object.freeze(this);
  }

  static of(session: SessionLike, events: readonly SessionEvent[], options: CompactionRequestOptions = {}): CompactionRequest {
    if (session === null || session === undefined) throw new InvalidArgumentError('session must not be null');
    if (events === null || events === undefined) throw new InvalidArgumentError('events must not be null');
    const originals = new Map<string, SessionEvent>();
    for (const e of options?.originals ?? []) originals.set(e.id, e);
    return new CompactionRequest(Session.from(session), events, originals, options?.instructions ?? []);
  }

  /** The same request over other events (a pipeline stage's window), originals and instructions kept. */
  withEvents(events: readonly SessionEvent[], originals: Iterable<SessionEvent> = this.originals.values()): CompactionRequest {
    return CompactionRequest.of(this.session, events, { originals, instructions: this.instructions });
  }

  /**
   * The event `event` stands for: the original of a masked copy when it is known (a copy of a copy points at
   * the first original), else `event` itself. Summarisers render this, so they summarise what was said.
   */
  originalOf(event: SessionEvent): SessionEvent {
    const from = event.metadata[METADATA_MASKED_FROM];
    return typeof from === 'string' ? (this.originals.get(from) ?? event) : event;
  }
}

/** Strategies reject a missing request with the same message. */
export function requireRequest(request: CompactionRequest | null | undefined): CompactionRequest {
  if (request === null || request === undefined) throw new InvalidArgumentError('request must not be null');
  return request;
}
