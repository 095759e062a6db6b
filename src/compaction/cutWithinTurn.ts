import { InvalidArgumentError } from '../errors.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { isTurnStart } from '../session/turns.js';
import { snapToTurnStart } from './snapToTurnStart.js';

/**
 * How a strategy may cut when no turn starts after its raw cut (one long agent turn):
 * - 'never' (default, the Java behaviour): the cut goes to the end, archiving the whole real window;
 * - 'tool-pair-safe': the cut goes to the first later step start (see `isStepStart`).
 */
export type CutWithinTurn = 'never' | 'tool-pair-safe';

/**
 * For each position i, whether cutting just before i would split a tool call from its result: some call
 * before i is answered at or after i. Results whose call is not in `events` are ignored (nothing to split).
 */
function splitsToolPair(events: readonly SessionEvent[]): boolean[] {
  const callAt = new Map<string, number>();
  const depth = new Array<number>(events.length + 1).fill(0);
  events.forEach((e, i) => {
    const m = e.message;
    if (m.type === 'assistant') for (const c of m.toolCalls ?? []) callAt.set(c.id, i);
    else if (m.type === 'tool') {
      for (const r of m.responses) {
        const c = callAt.get(r.id);
        // Positions c+1..i are inside the pair (call at c, result at i).
        if (c !== undefined && c < i) {
          depth[c + 1]!++;
          depth[i + 1]!--;
        }
      }
    }
  });
  const out = new Array<boolean>(events.length);
  let open = 0;
  for (let i = 0; i < events.length; i++) {
    open += depth[i]!;
    out[i] = open > 0;
  }
  return out;
}

/**
 * A step starts at a root, non-synthetic assistant message before which every tool call of the window has
 * been answered: cutting there never separates a call from its result nor leaves a result without its call.
 */
export function stepStarts(events: readonly SessionEvent[]): number[] {
  const inside = splitsToolPair(events);
  const out: number[] = [];
  events.forEach((e, i) => {
    if (e.messageType === 'assistant' && e.isRootEvent() && !e.isSynthetic() && !inside[i]) out.push(i);
  });
  return out;
}

export function isStepStart(events: readonly SessionEvent[], index: number): boolean {
  return stepStarts(events).includes(index);
}

/**
 * Moves a raw cut over the real events forward to a turn start (as `snapToTurnStart`); when no turn starts
 * at or after it, to the first step start at or after it instead, so that the current work of a long
 * single-turn agent run is kept. With no step start either, the cut goes to the end (the Java behaviour).
 * A turn start that sits between a call and its result (a user message interleaved into a tool exchange)
 * is passed over, so the promise holds on any log: no kept result without its call.
 */
export function toolPairSafeCut(realEvents: readonly SessionEvent[], rawCut: number): number {
  const inside = splitsToolPair(realEvents);
  const from = Math.max(0, rawCut);
  for (let i = snapToTurnStart(realEvents, from); i < realEvents.length; i++) {
    if (isTurnStart(realEvents[i]!) && !inside[i]) return i;
  }
  for (const i of stepStarts(realEvents)) if (i >= from) return i;
  return realEvents.length;
}

/** The cut a strategy makes under its `cutWithinTurn` option. */
export function cutAt(realEvents: readonly SessionEvent[], rawCut: number, mode: CutWithinTurn = 'never'): number {
  return mode === 'tool-pair-safe' ? toolPairSafeCut(realEvents, rawCut) : snapToTurnStart(realEvents, rawCut);
}

export function requireCutWithinTurn(value: unknown): CutWithinTurn {
  if (value === undefined || value === 'never') return 'never';
  if (value === 'tool-pair-safe') return value;
  throw new InvalidArgumentError("cutWithinTurn must be 'never' or 'tool-pair-safe'");
}
