import { expect } from 'chai';
import fc from 'fast-check';
import { Messages, SessionEvent } from 'session-compaction';
import { joinRuns } from '../../src/recall/joinRuns.js';
import { lackingNeighbours, logView } from '../../src/recall/neighbourView.js';
import { propertyParams } from '../support/arbitraries.js';

const log = Array.from({ length: 30 }, (_, i) =>
  SessionEvent.create({ sessionId: 's', id: `e${i}`, message: Messages.user(`m${i}`) }),
);
const slice = (from: number, to: number) => log.slice(from, to + 1);
const ids = (runs: readonly (readonly SessionEvent[])[]) => runs.map((run) => run.map((e) => e.id));

/** Runs around `centres` in the log, `radius` each side, merged where they overlap or touch (one store read). */
function read(centres: readonly number[], radius: number): SessionEvent[][] {
  const covered = log.map((_, i) => centres.some((c) => Math.abs(c - i) <= radius));
  const runs: SessionEvent[][] = [];
  let run: SessionEvent[] = [];
  covered.forEach((c, i) => {
    if (c) run.push(log[i]!);
    else if (run.length > 0) (runs.push(run), (run = []));
  });
  if (run.length > 0) runs.push(run);
  return runs;
}

describe('joinRuns', function () {
  it('a later run that overlaps an earlier one extends it, aligned on the events they share', function () {
    expect(ids(joinRuns([slice(5, 7)], [slice(6, 10)]))).to.deep.equal([['e5', 'e6', 'e7', 'e8', 'e9', 'e10']]);
    expect(ids(joinRuns([slice(5, 7)], [slice(2, 6)]))).to.deep.equal([['e2', 'e3', 'e4', 'e5', 'e6', 'e7']]);
  });

  it('a later run that reaches into two earlier runs makes them one', function () {
    expect(ids(joinRuns([slice(1, 3), slice(8, 9)], [slice(3, 8)]))).to.deep.equal([
      ['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9'],
    ]);
  });

  it('runs that only touch stay apart: nothing shows that they are adjacent', function () {
    expect(ids(joinRuns([slice(1, 3), slice(10, 11)], [slice(2, 6)]))).to.deep.equal([
      ['e1', 'e2', 'e3', 'e4', 'e5', 'e6'],
      ['e10', 'e11'],
    ]);
    expect(ids(joinRuns([slice(1, 3)], [slice(4, 6)]))).to.deep.equal([['e1', 'e2', 'e3']]);
  });

  it('a later run that disagrees on the order of the events it shares (the log changed) leaves the earlier ones as they were', function () {
    const changed = [log[6]!, log[20]!, log[7]!, log[8]!];
    expect(ids(joinRuns([slice(5, 7), slice(8, 9)], [changed]))).to.deep.equal([
      ['e5', 'e6', 'e7'],
      ['e8', 'e9'],
    ]);
  });

  it('property: the joined runs are slices of the log in log order, holding every earlier event once and every later run that shares one', function () {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 29 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 0, max: 2 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 29 }), { maxLength: 8 }),
        fc.integer({ min: 0, max: 4 }),
        (hits, narrow, wideCentres, wide) => {
          const base = read(hits, narrow);
          const more = read(wideCentres, wide);
          const joined = joinRuns(base, more);
          const at = (e: SessionEvent) => log.indexOf(e);
          const flat = joined.flat();
          // Each run is consecutive events of the log, and the runs come in log order.
          for (const run of joined) run.forEach((e, i) => i === 0 || expect(at(e)).to.equal(at(run[i - 1]!) + 1));
          for (let i = 1; i < joined.length; i++) expect(at(joined[i]![0]!)).to.be.greaterThan(at(joined[i - 1]!.at(-1)!));
          expect(new Set(flat.map((e) => e.id)).size).to.equal(flat.length);
          const baseIds = new Set(base.flat().map((e) => e.id));
          const expected = new Set(baseIds);
          for (const run of more) if (run.some((e) => baseIds.has(e.id))) run.forEach((e) => expected.add(e.id));
          expect(new Set(flat.map((e) => e.id))).to.deep.equal(expected);
        },
      ),
      propertyParams(),
    );
  });
});

describe('lackingNeighbours', function () {
  it('names an event whose neighbours were not read, but not one at the end of the log read around a hit', function () {
    const hits = [
      { event: log[29]!, score: 1 },
      { event: log[10]!, score: 1 },
    ];
    const view = logView(read([29, 10], 1));
    // e29 ends the log: the read around it (radius 1) shows nothing after it; e28 and e27 were not read.
    expect(lackingNeighbours([log[29]!], view, hits, 1, 1)).to.deep.equal([]);
    expect(lackingNeighbours([log[29]!], view, hits, 1, 2)).to.deep.equal(['e29']);
    expect(lackingNeighbours([log[10]!, log[11]!], view, hits, 1, 1)).to.deep.equal(['e11']);
  });
});
