import { InvalidArgumentError } from '../errors.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { planToolPairing, toolExchangeOf } from '../session/toolCallPairing.js';
import { isTurnStart } from '../session/turns.js';
import { snapToTurnStart } from './snapToTurnStart.js';

/**
 * How a strategy may cut when no turn starts after its raw cut (one long agent turn):
 * - 'agent-safe' (default): as 'tool-pair-safe', but the window is never emptied (with no step start after
 *   the raw cut, the cut falls back to the last safe point before the end) and, when the cut lands inside a
 *   turn, the turn's opening user message (the task) stays in the window;
 * - 'tool-pair-safe': the cut goes to the first later step start (see `stepStarts`), else to the end;
 * - 'never': the cut goes to the end, archiving the whole real window.
 */
export type CutWithinTurn = 'agent-safe' | 'tool-pair-safe' | 'never';

export const CUT_WITHIN_TURN_MODES: readonly CutWithinTurn[] = Object.freeze(['agent-safe', 'tool-pair-safe', 'never']);

/** The default cut of the window strategies. */
export const DEFAULT_CUT_WITHIN_TURN: CutWithinTurn = 'agent-safe';

/**
 * For each position i, whether cutting just before i would split a tool call from its result: some call
 * before i is answered at or after i. Results whose call is not in `events` are ignored (nothing to split).
 */
export function splitsToolPair(events: readonly SessionEvent[]): boolean[] {
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

/**
 * Moves a raw cut over the real events forward to a turn start (as `snapToTurnStart`); when no turn starts
 * at or after it, to the first step start at or after it instead, so that the current work of a long
 * single-turn agent run is kept. With no step start either, the cut goes to the end.
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

/**
 * The tool-pair-safe cut, except that it never takes the whole window: when that cut would go to the end,
 * it falls back to the last turn start or step start before the end that splits no tool pair (0 — no
 * cut — when there is none), so the model always gets at least its latest step.
 */
export function agentSafeCut(realEvents: readonly SessionEvent[], rawCut: number): number {
  const cut = toolPairSafeCut(realEvents, rawCut);
  if (cut < realEvents.length || rawCut <= 0) return cut;
  const inside = splitsToolPair(realEvents);
  for (let i = realEvents.length - 1; i > 0; i--) {
    const e = realEvents[i]!;
    if (inside[i]) continue;
    if (isTurnStart(e) || (e.messageType === 'assistant' && e.isRootEvent() && !e.isSynthetic())) return i;
  }
  return 0;
}

/** The cut a strategy makes under its `cutWithinTurn` option. */
export function cutAt(
  realEvents: readonly SessionEvent[],
  rawCut: number,
  mode: CutWithinTurn = DEFAULT_CUT_WITHIN_TURN,
): number {
  switch (mode) {
    case 'agent-safe':
      return agentSafeCut(realEvents, rawCut);
    case 'tool-pair-safe':
      return toolPairSafeCut(realEvents, rawCut);
    default:
      return snapToTurnStart(realEvents, rawCut);
  }
}

export function requireCutWithinTurn(value: unknown): CutWithinTurn {
  if (value === undefined) return DEFAULT_CUT_WITHIN_TURN;
  if ((CUT_WITHIN_TURN_MODES as readonly unknown[]).includes(value)) return value as CutWithinTurn;
  throw new InvalidArgumentError("cutWithinTurn must be 'agent-safe', 'tool-pair-safe' or 'never'");
}

/** A cut worked out over the real events: what leaves the window and what stays, in order. */
export interface CutPlan {
  /** Index into the real events: real[0, cut) is archived except the events kept below. */
  cut: number;
  archived: SessionEvent[];
  /** Kept events before the cut (pinned events, the turn's opening message), then real[cut, end). */
  kept: SessionEvent[];
  /** The events before the cut that stay: pinned ones with their tool-pair partners, and the task. */
  heldBack: SessionEvent[];
}

/** Index of the turn start that opens the turn containing position `index`, or -1 (preamble). */
function turnOpenerBefore(realEvents: readonly SessionEvent[], index: number): number {
  for (let i = index - 1; i >= 0; i--) if (isTurnStart(realEvents[i]!)) return i;
  return -1;
}

/**
 * The events no compaction takes from the window: pinned events, closed over tool pairs (a pinned call keeps
 * its results and a pinned result keeps its call, so holding a pinned event back never leaves half a pair in
 * the window), and every call still waiting for its result (see `ToolCallState`): archived, it would leave the
 * result, when it comes, without its call.
 */
export function pinnedIds(events: readonly SessionEvent[]): Set<string> {
  const pinned = new Set<string>();
  // A call still waiting stays with the results its message already has (a parallel call answered).
  const { calls } = planToolPairing(events.map(toolExchangeOf));
  const waiting = new Set(calls.filter((c) => c.state === 'pending').map((c) => c.at));
  for (const c of calls) {
    if (!waiting.has(c.at)) continue;
    pinned.add(events[c.at]!.id);
    if (c.answeredAt !== null) pinned.add(events[c.answeredAt]!.id);
  }
  const pinnedCalls = new Set<string>();
  for (const e of events) {
    if (!e.isPinned()) continue;
    pinned.add(e.id);
    const m = e.message;
    if (m.type === 'assistant') for (const c of m.toolCalls ?? []) pinnedCalls.add(c.id);
    else if (m.type === 'tool') for (const r of m.responses) pinnedCalls.add(r.id);
  }
  if (pinnedCalls.size === 0) return pinned;
  for (const e of events) {
    const m = e.message;
    const ids =
      m.type === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : m.type === 'tool' ? m.responses.map((r) => r.id) : [];
    if (ids.some((id) => pinnedCalls.has(id))) pinned.add(e.id);
  }
  return pinned;
}

/**
 * The cut under `mode` with pinned events held back: they stay in the window, before the kept suffix, in
 * log order. In 'agent-safe' mode a cut inside a turn also holds back the turn's opening user message.
 */
export function planCut(
  realEvents: readonly SessionEvent[],
  rawCut: number,
  mode: CutWithinTurn,
  options: { keepTurnOpener?: boolean } = {},
): CutPlan {
  // Under budget the agent-safe cut archives nothing; the other modes keep the snap to the next turn start, which archives a
  // leading preamble even then.
  const cut = mode === 'agent-safe' && rawCut <= 0 ? 0 : cutAt(realEvents, rawCut, mode);
  const pinned = pinnedIds(realEvents);
  const opener =
    mode === 'agent-safe' &&
    options.keepTurnOpener !== false &&
    cut > 0 &&
    cut < realEvents.length &&
    !isTurnStart(realEvents[cut]!)
      ? turnOpenerBefore(realEvents, cut)
      : -1;
  const archived: SessionEvent[] = [];
  const heldBack: SessionEvent[] = [];
  for (let i = 0; i < cut; i++) {
    const e = realEvents[i]!;
    (i === opener || pinned.has(e.id) ? heldBack : archived).push(e);
  }
  return { cut, archived, heldBack, kept: [...heldBack, ...realEvents.slice(cut)] };
}
