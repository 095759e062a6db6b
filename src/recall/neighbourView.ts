import type { SessionEvent } from '../session/SessionEvent.js';
import type { LogView } from './contextRanking.js';
import type { RetrievedEvent } from './Retriever.js';

/** A LogView with the runs it was built from (see logView). */
export interface NeighbourView extends LogView {
  runs: readonly (readonly SessionEvent[])[];
}

/**
 * The view of runs of one log (in log order, never touching): positions are log order, with a gap of one
 * between runs, so adjacency — and the recall block's gap markers — is what it is in the log. An event in two
 * runs keeps its first place.
 */
export function logView(runs: readonly (readonly SessionEvent[])[]): NeighbourView {
  const log = new Map<number, SessionEvent>();
  const position = new Map<string, number>();
  let at = 0;
  for (const run of runs) {
    for (const e of run) {
      if (position.has(e.id)) continue;
      log.set(at, e);
      position.set(e.id, at++);
    }
    at++;
  }
  return { log, position, runs };
}

/**
 * The ids of `events` that lack some of their `neighbors` on either side in `view`: a position missing from the
 * view is known to be past the log's edge only when it lies within `radius` of a hit, whose neighbourhood was
 * read that far (a hit at the log's end has nothing after it); anywhere else it was not read.
 */
export function lackingNeighbours(
  events: readonly SessionEvent[],
  view: LogView,
  hits: readonly RetrievedEvent[],
  radius: number,
  neighbors: number,
): string[] {
  const hitAt = new Set<number>();
  for (const h of hits) {
    const at = view.position.get(h.event.id);
    if (at !== undefined) hitAt.add(at);
  }
  const known = (p: number) => {
    if (view.log.has(p)) return true;
    for (let d = -radius; d <= radius; d++) if (hitAt.has(p + d)) return true;
    return false;
  };
  const lacking: string[] = [];
  for (const e of events) {
    const at = view.position.get(e.id);
    if (at === undefined) continue;
    for (let p = at - neighbors; p <= at + neighbors; p++) {
      if (!known(p)) {
        lacking.push(e.id);
        break;
      }
    }
  }
  return lacking;
}
