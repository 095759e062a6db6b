import type { SessionEvent } from '../session/SessionEvent.js';

/**
 * Runs of one session's log (`base`, in log order, as findEventNeighbours returns them) joined with runs read
 * later around events of `base` (`more`): runs that share an event are one run, aligned on it — both are
 * slices of the same log, so one shared event fixes where every other one goes. The result is in log order and
 * holds every event of `base` where it was.
 *
 * Runs that share no event are kept apart, so a later read must reach one event past what it needs for its
 * adjacency to an earlier run to show (ContextAssembler reads a radius one wider than it quotes). A later run
 * that shares no event with `base` cannot be placed and is left out; so is every later run of a group whose
 * runs disagree on the order of their events (the log changed between the reads): `base` then stays as it was.
 */
export function joinRuns(
  base: readonly (readonly SessionEvent[])[],
  more: readonly (readonly SessionEvent[])[],
): SessionEvent[][] {
  const runs = [...base, ...more];
  // Union-find over runs that share an event.
  const parent = runs.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const firstRunOf = new Map<string, { run: number; at: number }>();
  const links: { from: number; to: number; shift: number }[] = [];
  runs.forEach((run, r) =>
    run.forEach((event, at) => {
      const seen = firstRunOf.get(event.id);
      if (seen === undefined) {
        firstRunOf.set(event.id, { run: r, at });
        return;
      }
      // Run r starts `shift` positions after run `seen.run`.
      links.push({ from: seen.run, to: r, shift: seen.at - at });
      parent[root(r)] = root(seen.run);
    }),
  );
  const groups = new Map<number, number[]>();
  runs.forEach((_, r) => {
    const g = root(r);
    const members = groups.get(g);
    if (members === undefined) groups.set(g, [r]);
    else members.push(r);
  });
  const joined: { first: number; events: SessionEvent[] }[] = [];
  for (const members of groups.values()) {
    const bases = members.filter((r) => r < base.length);
    if (bases.length === 0) continue;
    const placed = members.length === 1 ? null : place(members, links, runs);
    if (placed === null) {
      for (const r of bases) joined.push({ first: r, events: [...runs[r]!] });
    } else {
      joined.push({ first: bases[0]!, events: placed });
    }
  }
  return joined.sort((a, b) => a.first - b.first).map((j) => j.events);
}

/** The runs of one group as one run, or null when they disagree (or leave a hole, which overlap cannot). */
function place(
  members: readonly number[],
  links: readonly { from: number; to: number; shift: number }[],
  runs: readonly (readonly SessionEvent[])[],
): SessionEvent[] | null {
  const inGroup = new Set(members);
  const offset = new Map<number, number>([[members[0]!, 0]]);
  const adjacent = new Map<number, { other: number; shift: number }[]>();
  for (const { from, to, shift } of links) {
    if (!inGroup.has(from)) continue;
    (adjacent.get(from) ?? adjacent.set(from, []).get(from)!).push({ other: to, shift });
    (adjacent.get(to) ?? adjacent.set(to, []).get(to)!).push({ other: from, shift: -shift });
  }
  const queue = [members[0]!];
  while (queue.length > 0) {
    const r = queue.shift()!;
    for (const { other, shift } of adjacent.get(r) ?? []) {
      const at = offset.get(r)! + shift;
      const known = offset.get(other);
      if (known === undefined) {
        offset.set(other, at);
        queue.push(other);
      } else if (known !== at) {
        return null;
      }
    }
  }
  const slots = new Map<number, SessionEvent>();
  const where = new Map<string, number>();
  for (const r of members) {
    const o = offset.get(r)!;
    for (const [i, event] of runs[r]!.entries()) {
      const p = o + i;
      const there = slots.get(p);
      if ((there !== undefined && there.id !== event.id) || (where.has(event.id) && where.get(event.id) !== p)) return null;
      slots.set(p, event);
      where.set(event.id, p);
    }
  }
  const from = Math.min(...slots.keys());
  const to = Math.max(...slots.keys());
  const events: SessionEvent[] = [];
  for (let p = from; p <= to; p++) {
    const event = slots.get(p);
    if (event === undefined) return null;
    events.push(event);
  }
  return events;
}
