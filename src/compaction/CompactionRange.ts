import { InvalidArgumentError } from '../errors.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { isTurnStart } from '../session/turns.js';
import { invalid, requireDate } from '../validation/inputs.js';
import { CompactionResult } from './CompactionResult.js';
import { splitsToolPair } from './cutWithinTurn.js';

/**
 * Limits a compaction to part of the active window (the CLI's `--from`/`--to`). Give either event ids or
 * times, not both:
 * - `fromEventId` / `toEventId`: both inclusive; either may be left out (start / end of the window);
 * - `since` / `until`: the events whose timestamps fall in [since, until] (either bound optional);
 *   `olderThanMs`: the events strictly older than `now - olderThanMs`.
 * The range is widened to safe boundaries (see `snap`), so it never separates a tool call from its result.
 */
export interface CompactionRange {
  fromEventId?: string;
  toEventId?: string;
  since?: Date;
  until?: Date;
  olderThanMs?: number;
  /**
   * 'turn' (default): the range is widened to whole turns (from its first event's turn start to the end of
   * its last event's turn), so a range never splits a turn. 'tool-pair': widened only to the nearest turn or
   * step start that splits no tool pair (finer, for agent sessions that are one long turn).
   */
  snap?: 'turn' | 'tool-pair';
}

/** A resolved range: `events.slice(start, end)` is what the strategy sees. */
export interface ResolvedRange {
  start: number;
  end: number;
}

const KEYS = new Set(['fromEventId', 'toEventId', 'since', 'until', 'olderThanMs', 'snap']);

/** Checks a range before anything is read. */
export function requireCompactionRange(range: unknown): CompactionRange {
  if (range === null || typeof range !== 'object' || Array.isArray(range)) throw invalid('range', 'an object', range);
  const r = range as Record<string, unknown>;
  for (const key of Object.keys(r)) {
    if (!KEYS.has(key)) throw new InvalidArgumentError(`range has an unknown field: ${key}`);
  }
  for (const key of ['fromEventId', 'toEventId'] as const) {
    if (r[key] !== undefined && (typeof r[key] !== 'string' || r[key] === ''))
      throw new InvalidArgumentError(`range.${key} must be a non-empty string`);
  }
  if (r.since !== undefined) requireDate(r.since, 'range.since');
  if (r.until !== undefined) requireDate(r.until, 'range.until');
  if (r.olderThanMs !== undefined) {
    const ms = r.olderThanMs;
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
      throw new InvalidArgumentError('range.olderThanMs must be a finite number >= 0');
    if (r.until !== undefined) throw new InvalidArgumentError('range.olderThanMs and range.until are mutually exclusive');
  }
  const byId = r.fromEventId !== undefined || r.toEventId !== undefined;
  const byTime = r.since !== undefined || r.until !== undefined || r.olderThanMs !== undefined;
  if (byId && byTime) throw new InvalidArgumentError('range takes event ids or times, not both');
  if (!byId && !byTime) throw new InvalidArgumentError('range must set fromEventId, toEventId, since, until or olderThanMs');
  if (r.snap !== undefined && r.snap !== 'turn' && r.snap !== 'tool-pair')
    throw new InvalidArgumentError("range.snap must be 'turn' or 'tool-pair'");
  if (r.since instanceof Date && r.until instanceof Date && r.since > r.until)
    throw new InvalidArgumentError('range.since must not come after range.until');
  return r as CompactionRange;
}

/**
 * The part of `window` (the active window, log order) that `range` selects, widened to safe boundaries;
 * null when no event falls in a time range. Unknown ids and a from after its to are InvalidArgumentError.
 */
export function resolveCompactionRange(window: readonly SessionEvent[], range: CompactionRange, now: Date): ResolvedRange | null {
  const r = requireCompactionRange(range);
  let first: number;
  let last: number;
  if (r.fromEventId !== undefined || r.toEventId !== undefined) {
    first = r.fromEventId === undefined ? 0 : indexOf(window, r.fromEventId);
    last = r.toEventId === undefined ? window.length - 1 : indexOf(window, r.toEventId);
    if (first > last) throw new InvalidArgumentError(`fromEventId ${r.fromEventId} comes after toEventId ${r.toEventId}`);
  } else {
    const since = r.since?.getTime() ?? -Infinity;
    // "Older than" is strict; timestamps are whole milliseconds.
    const until = r.olderThanMs !== undefined ? now.getTime() - r.olderThanMs - 1 : (r.until?.getTime() ?? Infinity);
    const inside = (e: SessionEvent) => e.timestamp.getTime() >= since && e.timestamp.getTime() <= until;
    first = window.findIndex(inside);
    if (first < 0) return null;
    last = window.length - 1;
    while (!inside(window[last]!)) last--;
  }
  if (window.length === 0) return null;
  const boundaries = safeBoundaries(window, r.snap ?? 'turn');
  let start = 0;
  for (const b of boundaries) if (b <= first) start = b;
  let end = window.length;
  for (const b of boundaries) {
    if (b > last) {
      end = b;
      break;
    }
  }
  return { start, end };
}

/** The first and last event id of a resolved range: what a compaction record and a preview report. */
export function rangeBounds(window: readonly SessionEvent[], range: ResolvedRange): { fromEventId: string; toEventId: string } {
  return { fromEventId: window[range.start]!.id, toEventId: window[range.end - 1]!.id };
}

function indexOf(window: readonly SessionEvent[], id: string): number {
  const i = window.findIndex((e) => e.id === id);
  if (i < 0) throw new InvalidArgumentError(`Event not found in the active window: ${id}`);
  return i;
}

/** Ascending positions a range may start or end before without splitting a turn (or, with 'tool-pair', a tool pair). */
function safeBoundaries(window: readonly SessionEvent[], snap: 'turn' | 'tool-pair'): number[] {
  const inside = splitsToolPair(window);
  const out: number[] = [];
  window.forEach((e, i) => {
    if (inside[i]) return;
    const step = e.messageType === 'assistant' && e.isRootEvent() && !e.isSynthetic();
    if (isTurnStart(e) || (snap === 'tool-pair' && step)) out.push(i);
  });
  return out;
}

/** A strategy's result over `window.slice(start, end)` put in the range's place; the rest of the window is kept. */
export function placeInWindow(window: readonly SessionEvent[], range: ResolvedRange, result: CompactionResult): CompactionResult {
  return new CompactionResult(
    [...window.slice(0, range.start), ...result.compactedEvents, ...window.slice(range.end)],
    result.archivedEvents,
    result.tokensEstimatedSaved,
    result.skipReason,
    result.usage,
  );
}
