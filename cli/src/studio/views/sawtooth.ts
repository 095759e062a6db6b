import type { CompactionRecord, SessionEvent } from 'session-compaction';
import { count, html, type Html } from '../html.js';

export interface SawtoothPoint {
  /** Originals appended so far. */
  step: number;
  tokens: number;
  /** The compaction that produced this point, if any. */
  compactionId: string | null;
}

/**
 * Active tokens over the session's life: each original event, in append order, adds its tokens; each standing compaction, right
 * after the last original of the window it compacted, sets the window to what it committed (the window after,
 * counted from the log and the records' removed events). Reverted compactions are left out: the line is the
 * life of the window as it stands.
 */
export function sawtooth(
  events: readonly SessionEvent[],
  records: readonly CompactionRecord[],
  tokensOf: (e: SessionEvent) => number,
): SawtoothPoint[] {
  const byId = new Map<string, SessionEvent>();
  for (const r of records) for (const e of r.removedEvents) byId.set(e.id, e);
  for (const e of events) byId.set(e.id, e);
  const added = new Set(records.flatMap((r) => r.addedEventIds));
  // Append order, not log order: a compaction moves what it archives before the events it keeps (a pinned
  // first event then sits after the archive), so the log's order is not the order the events came in. Their
  // timestamps are (the append time unless the caller set one); the log order breaks ties.
  const originals = events
    .map((e, i) => ({ e, i }))
    .filter(({ e }) => !added.has(e.id) && !e.isSynthetic())
    .sort((a, b) => a.e.timestamp.getTime() - b.e.timestamp.getTime() || a.i - b.i)
    .map(({ e }) => e);
  const position = new Map(originals.map((e, i) => [e.id, i]));
  const standing = records.filter((r) => r.revertedAt === null).sort((a, b) => a.versionAfter - b.versionAfter);
  const at = standing.map((r) => ({
    record: r,
    after: Math.max(-1, ...r.windowBefore.map((id) => position.get(id) ?? -1)),
  }));
  const windowTokens = (ids: readonly string[]) =>
    ids.reduce((sum, id) => {
      const e = byId.get(id);
      return sum + (e === undefined ? 0 : tokensOf(e));
    }, 0);
  const points: SawtoothPoint[] = [{ step: 0, tokens: 0, compactionId: null }];
  let active = 0;
  let next = 0;
  const applyUpTo = (i: number) => {
    while (next < at.length && at[next]!.after <= i) {
      active = windowTokens(at[next]!.record.windowAfter);
      points.push({ step: i + 1, tokens: active, compactionId: at[next]!.record.id });
      next++;
    }
  };
  applyUpTo(-1);
  originals.forEach((e, i) => {
    active += tokensOf(e);
    points.push({ step: i + 1, tokens: active, compactionId: null });
    applyUpTo(i);
  });
  return points;
}

/** The sawtooth as an SVG line chart, with the context window as a dashed line. */
export function sawtoothChart(points: readonly SawtoothPoint[], contextWindow: number): Html {
  const width = 760;
  const height = 220;
  const pad = { left: 56, right: 12, top: 12, bottom: 28 };
  const steps = Math.max(1, ...points.map((p) => p.step));
  const top = Math.max(contextWindow, ...points.map((p) => p.tokens), 1) * 1.05;
  const x = (step: number) => pad.left + (step / steps) * (width - pad.left - pad.right);
  const y = (tokens: number) => pad.top + (1 - tokens / top) * (height - pad.top - pad.bottom);
  const line = points.map((p) => `${x(p.step).toFixed(1)},${y(p.tokens).toFixed(1)}`).join(' ');
  const marks = points.filter((p) => p.compactionId !== null);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => Math.round(top * f));
  return html`<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="active tokens over the session's life">
    ${ticks.map(
      (t) =>
        html`<line class="grid" x1="${pad.left}" x2="${width - pad.right}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}"></line>
          <text class="axis" x="${pad.left - 6}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end">${count(t)}</text>`,
    )}
    <line
      class="window"
      x1="${pad.left}"
      x2="${width - pad.right}"
      y1="${y(contextWindow).toFixed(1)}"
      y2="${y(contextWindow).toFixed(1)}"
    ></line>
    <text class="axis" x="${width - pad.right}" y="${(y(contextWindow) - 4).toFixed(1)}" text-anchor="end">
      context window ${count(contextWindow)}
    </text>
    <polyline class="tokens" points="${line}"></polyline>
    ${marks.map((p) => html`<circle class="compaction" cx="${x(p.step).toFixed(1)}" cy="${y(p.tokens).toFixed(1)}" r="3.5"><title>compaction ${p.compactionId}: ${count(p.tokens)} tokens after</title></circle>`)}
    <text class="axis" x="${pad.left}" y="${height - 8}">event 0</text>
    <text class="axis" x="${width - pad.right}" y="${height - 8}" text-anchor="end">event ${steps}</text>
  </svg>`;
}
