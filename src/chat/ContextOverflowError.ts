import { IllegalStateError } from '../errors.js';
import type { SessionEvent } from '../session/SessionEvent.js';

/** A refusal recognised as a context overflow, with what the provider stated about the prompt. */
export interface ContextOverflow {
  /** The provider's message, as it said it. */
  message: string;
  /** The HTTP status of the refusal, when known. */
  status?: number;
  /** 'tokens': the prompt is longer than the model's window; 'bytes': the request body is over a size limit. */
  kind: 'tokens' | 'bytes';
  /** The prompt's length in the provider's tokens, when the refusal states it. */
  promptTokens?: number;
  /** The model's context window in tokens, when stated. */
  limitTokens?: number;
  /** Tokens reserved for the reply (`max_tokens`) that counted against the window, when stated. */
  replyTokens?: number;
}

/**
 * The provider refused a turn's prompt as too long for the model's context window, and recovery (an
 * emergency compaction and one retry) could not get the turn through. Nothing is lost: the turn's input is
 * stored (`persisted`), and the next request starts from the compacted window. Thrown once per turn, never
 * after a second retry.
 */
export class ContextOverflowError extends IllegalStateError {
  /** The session whose prompt did not fit. */
  readonly sessionId: string;
  /** What the provider said, as the last refusal stated it. */
  readonly overflow: ContextOverflow;
  /**
   * Model calls the provider refused in this turn: 2 after the one retry; 1 when there was nothing left to
   * compact (`archived` 0), or when the call could not be sent again (a stream already handed on: `archived`
   * > 0, the next request fits).
   */
  readonly attempts: number;
  /** Events archived by the emergency compaction (they stay in the log, and recall can find them). */
  readonly archived: number;
  /** The events this turn appended (its input, and steps already finished): stored, not lost. */
  readonly persisted: readonly SessionEvent[];

  constructor(
    sessionId: string,
    overflow: ContextOverflow,
    details: { attempts: number; archived: number; persisted?: readonly SessionEvent[]; cause?: unknown },
  ) {
    const why =
      details.attempts > 1
        ? `the provider refused it again after an emergency compaction archived ${details.archived} events`
        : details.archived > 0
          ? `an emergency compaction archived ${details.archived} events, but the reply was already handed on as a stream, so the request was not sent again: send it again`
          : 'nothing more could be archived without dropping the current input or pinned events';
    super(
      `Session '${sessionId}': the prompt does not fit the model's context window (${why}); the turn's input is stored. Provider: ${overflow.message}`,
      { cause: details.cause },
    );
    this.name = 'ContextOverflowError';
    this.sessionId = sessionId;
    this.overflow = overflow;
    this.attempts = details.attempts;
    this.archived = details.archived;
    this.persisted = Object.freeze([...(details.persisted ?? [])]);
  }
}
