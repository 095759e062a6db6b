import { InvalidArgumentError } from '../errors.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { hasMethods } from './hasMethods.js';

/** The widest neighbourhood one call reads around each event. */
export const MAX_NEIGHBOUR_RADIUS = 100;

/**
 * A repository that reads events by their position in the log: the few events around given ones, without
 * reading the log. Recall quotes each hit with its neighbours; with this capability that costs the same at
 * 100,000 archived events as at 1,000 (SQLite and PostgreSQL read index ranges of their log order).
 */
export interface EventNeighbourhoodRepository {
  /**
   * The events around `eventIds` in the session's log: each given event with up to `radius` events before
   * and after it (archived or not, every branch), as runs of consecutive log events. The runs are in log
   * order and never touch: overlapping or adjacent neighbourhoods are one run, so two runs always have at
   * least one event between them in the log. Ids not in the log, and a missing session, give nothing.
   * `radius` is an integer in [0, MAX_NEIGHBOUR_RADIUS].
   */
  findEventNeighbours(sessionId: string, eventIds: readonly string[], radius: number): Promise<SessionEvent[][]>;
}

/** Whether `repository` is an EventNeighbourhoodRepository: it has every one of its methods. */
export function isEventNeighbourhoodRepository<R>(repository: R): repository is R & EventNeighbourhoodRepository {
  return hasMethods(repository, ['findEventNeighbours']);
}

/** Validates a neighbourhood request; returns the distinct ids. */
export function requireNeighbourRequest(eventIds: readonly string[], radius: number): string[] {
  if (!Array.isArray(eventIds) || eventIds.some((id) => typeof id !== 'string')) {
    throw new InvalidArgumentError('eventIds must be an array of strings');
  }
  if (typeof radius !== 'number' || !Number.isInteger(radius) || radius < 0 || radius > MAX_NEIGHBOUR_RADIUS) {
    throw new InvalidArgumentError(`radius must be an integer in [0, ${MAX_NEIGHBOUR_RADIUS}]`);
  }
  return [...new Set(eventIds)];
}

/**
 * One neighbourhood as a store read it: consecutive log events with their ordering keys (a sequence number,
 * or a list index), and the key of the event right after the last one (null when the last one ends the log).
 */
export interface KeyedWindow {
  keys: readonly number[];
  events: readonly SessionEvent[];
  next: number | null;
}

/**
 * Merges neighbourhoods into the runs `findEventNeighbours` returns: sorted by their first key, a window
 * joins the run before it when it starts at or before the event right after that run (overlap or adjacency).
 */
export function mergeNeighbourWindows(windows: readonly KeyedWindow[]): SessionEvent[][] {
  const sorted = windows.filter((w) => w.keys.length > 0).sort((a, b) => a.keys[0]! - b.keys[0]!);
  const runs: SessionEvent[][] = [];
  let run: SessionEvent[] = [];
  let last = -Infinity;
  let next: number | null = null;
  for (const w of sorted) {
    const adjoins = run.length > 0 && (next === null || w.keys[0]! <= next);
    if (!adjoins) {
      if (run.length > 0) runs.push(run);
      run = [];
      last = -Infinity;
    }
    w.keys.forEach((key, i) => {
      if (key > last) {
        run.push(w.events[i]!);
        last = key;
      }
    });
    if (w.keys[w.keys.length - 1]! >= last) next = w.next;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/**
 * The runs around `positions` in a log whose events are at positions 0 to `length - 1` (`eventAt`): the ranges
 * of `radius` either side, merged where they overlap or touch (as mergeNeighbourWindows merges windows), each run
 * read once. For a log held by position, where no window needs to be built per hit.
 */
export function positionalNeighbourRuns(
  positions: readonly number[],
  radius: number,
  length: number,
  eventAt: (position: number) => SessionEvent,
): SessionEvent[][] {
  const ranges: Array<[number, number]> = [];
  for (const p of [...positions].sort((a, b) => a - b)) {
    const lo = Math.max(0, p - radius);
    const hi = Math.min(length - 1, p + radius);
    const last = ranges[ranges.length - 1];
    if (last !== undefined && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else ranges.push([lo, hi]);
  }
  return ranges.map(([lo, hi]) => {
    const run: SessionEvent[] = [];
    for (let i = lo; i <= hi; i++) run.push(eventAt(i));
    return run;
  });
}
