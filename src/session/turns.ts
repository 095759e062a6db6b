import type { SessionEvent } from './SessionEvent.js';

/**
 * A turn starts at a root (branch-less), non-synthetic user event. Branch user events are turn-internal
 * (a sub-agent talking), and synthetic user events are shadow prompts opening a summary.
 */
export function isTurnStart(event: SessionEvent): boolean {
  return event.messageType === 'user' && event.isRootEvent() && !event.isSynthetic();
}

export interface TurnSplit {
  /** Events before the first turn start. */
  preamble: SessionEvent[];
  /** Each turn: its root user event and everything up to the next one. */
  turns: SessionEvent[][];
}

export function splitTurns(events: readonly SessionEvent[]): TurnSplit {
  const preamble: SessionEvent[] = [];
  const turns: SessionEvent[][] = [];
  for (const event of events) {
    if (isTurnStart(event)) turns.push([event]);
    else if (turns.length === 0) preamble.push(event);
    else turns[turns.length - 1]!.push(event);
  }
  return { preamble, turns };
}

export function countTurns(events: readonly SessionEvent[]): number {
  let n = 0;
  for (const e of events) if (isTurnStart(e)) n++;
  return n;
}
