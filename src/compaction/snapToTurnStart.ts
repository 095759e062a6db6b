import type { SessionEvent } from '../session/SessionEvent.js';
import { isTurnStart } from '../session/turns.js';

/**
 * Moves a cut forward (never back) to the first turn start at or after it, or to the end. Cutting only at
 * turn starts keeps a tool call with its result and a question with its answer.
 */
export function snapToTurnStart(realEvents: readonly SessionEvent[], rawCut: number): number {
  let i = Math.max(0, rawCut);
  while (i < realEvents.length && !isTurnStart(realEvents[i]!)) i++;
  return Math.min(i, realEvents.length);
}
