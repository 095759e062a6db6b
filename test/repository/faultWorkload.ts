/**
 * What the fault tests (SIGKILL crash runs and connection kills) do to a session and what must hold afterwards.
 * The crash worker and the in-process connection-fault suite share it, so both check the same history.
 */
import { expect } from 'chai';
import {
  CompactionResult,
  Messages,
  SessionEvent,
  SlidingWindowCompactionStrategy,
  type CompactionRequest,
  type CompactionStrategyLike,
} from 'session-compaction';
import { CharacterTokenCountEstimator, isTurnStart } from 'session-compaction/spi';

const sliding = new SlidingWindowCompactionStrategy({ maxEvents: 4, tokenCountEstimator: new CharacterTokenCountEstimator() });

/**
 * Alternates the sliding window with a summarising cut whose new summary supersedes (hard-deletes) the last
 * one, so a compaction both archives events and removes one: a half-applied commit would show.
 */
export function faultStrategy(sessionId: string, tag: string, round: number): CompactionStrategyLike {
  if (round % 2 === 0) return sliding;
  return async (request: CompactionRequest) => {
    const events = request.events;
    const starts = events.flatMap((e, i) => (isTurnStart(e) ? [i] : []));
    if (starts.length < 3) return CompactionResult.noop(events);
    const cut = starts[starts.length - 2]!;
    const summary = SessionEvent.create({
      sessionId,
      id: `${tag}-summary-${round}`,
      message: Messages.assistant(`summary up to ${tag}.${round}`),
      metadata: { synthetic: true, compactionSource: 'fault-test' },
    });
    const archived = events.slice(0, cut).filter((e) => !e.isSynthetic());
    return new CompactionResult([summary, ...events.slice(cut)], archived, 0);
  };
}

/** One turn of the workload: a question and its answer, with ids the history checker can recognise. */
export function turnEvents(sessionId: string, tag: string, turn: number): SessionEvent[] {
  return [
    SessionEvent.create({ sessionId, id: `${tag}-${turn}-u`, message: Messages.user(`question ${tag}.${turn}`) }),
    SessionEvent.create({ sessionId, id: `${tag}-${turn}-a`, message: Messages.assistant(`answer ${tag}.${turn}`) }),
  ];
}

export interface HistoryCheck {
  /** The whole log (EventFilter.all()) and the active window (EventFilter.active()), read after the faults. */
  all: readonly SessionEvent[];
  active: readonly SessionEvent[];
  version: number;
  /** Every append the workload saw succeed. */
  acknowledged: Iterable<string>;
  /** Compactions the workload saw commit, and those whose outcome it could not know (the call failed). */
  committedAtLeast: number;
  committedAtMost: number;
  context: string;
}

/**
 * The history checker: every acknowledged append is in the final log exactly once, no compaction is
 * half-applied (the archive is a prefix, the window is at most one summary then real events from a turn
 * start, summaries are never archived) and the version accounts for every committed write. Returns the
 * number of committed compactions.
 */
export function checkHistory(h: HistoryCheck): number {
  const { all, active, context } = h;
  const ids = all.map((e) => e.id);
  expect(new Set(ids).size, `${context}: no id twice`).to.equal(ids.length);
  const present = new Set(ids);
  const missing = [...h.acknowledged].filter((id) => !present.has(id));
  expect(missing, `${context}: acknowledged appends missing`).to.deep.equal([]);

  const firstActive = all.findIndex((e) => !e.archived);
  if (firstActive >= 0)
    expect(
      all.slice(firstActive).every((e) => !e.archived),
      `${context}: archive is a prefix`,
    ).to.equal(true);
  expect(
    active.map((e) => e.id),
    `${context}: active() is the non-archived tail`,
  ).to.deep.equal(all.filter((e) => !e.archived).map((e) => e.id));
  const synthetic = active.filter((e) => e.isSynthetic());
  expect(synthetic.length, `${context}: superseded summaries removed`).to.be.at.most(1);
  expect(
    active.slice(0, synthetic.length).every((e) => e.isSynthetic()),
    `${context}: summary first`,
  ).to.equal(true);
  const real = active.filter((e) => !e.isSynthetic());
  expect(real.length === 0 || isTurnStart(real[0]!), `${context}: window starts at a turn start`).to.equal(true);
  expect(
    all.filter((e) => e.archived).every((e) => !e.isSynthetic()),
    `${context}: summaries are never archived`,
  ).to.equal(true);

  // Each new append and each committed compaction bumps the version once; only real events are appended.
  const committed = h.version - all.filter((e) => !e.isSynthetic()).length;
  expect(committed, `${context}: committed compactions`).to.be.at.least(h.committedAtLeast).and.at.most(h.committedAtMost);
  return committed;
}
