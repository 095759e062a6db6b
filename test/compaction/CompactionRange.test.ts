import { expect } from 'chai';
import { CompactionResult, InvalidArgumentError, Messages, type SessionEvent } from 'session-compaction';
import {
  placeInWindow,
  rangeBounds,
  requireCompactionRange,
  resolveCompactionRange,
} from '../../src/compaction/CompactionRange.js';
import { A, SYS, U, event, expectThrows } from '../support/fixtures.js';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
const call = (id: string) => event(Messages.assistant(null, { toolCalls: [Messages.toolCall(id, 'f', '{}')] }));
const result = (id: string) => event(Messages.tool([Messages.toolResponse(id, 'f', 'ok')]));

/** Three turns of two events each: u1 a1 | u2 a2 | u3 a3. */
function threeTurns(): SessionEvent[] {
  return [U('u1'), A('a1'), U('u2'), A('a2'), U('u3'), A('a3')];
}

/** Events one second apart from `at(0)`. */
function timed(): SessionEvent[] {
  return ['u1', 'a1', 'u2', 'a2', 'u3', 'a3'].map((text, i) =>
    event(text.startsWith('u') ? Messages.user(text) : Messages.assistant(text), { timestamp: at(i * 1000) }),
  );
}

describe('CompactionRange: what part of the window a compaction may touch', function () {
  describe('checking a range', function () {
    it('refuses a non-object, naming what it got', function () {
      for (const bad of [null, 'x', ['fromEventId']]) {
        expectThrows(() => requireCompactionRange(bad), InvalidArgumentError, 'range must be an object');
      }
    });

    it('refuses an unknown field by name instead of ignoring it', function () {
      expectThrows(
        () => requireCompactionRange({ fromEventId: 'a', form: 'b' }),
        InvalidArgumentError,
        'range has an unknown field: form',
      );
    });

    it('refuses an empty or non-string event id, naming the field', function () {
      for (const key of ['fromEventId', 'toEventId']) {
        for (const bad of ['', 7]) {
          expectThrows(
            () => requireCompactionRange({ [key]: bad }),
            InvalidArgumentError,
            `range.${key} must be a non-empty string`,
          );
        }
      }
    });

    it('refuses a since or until that is not a valid date', function () {
      expectThrows(
        () => requireCompactionRange({ since: '2026-01-01' }),
        InvalidArgumentError,
        'range.since must be a valid Date',
      );
      expectThrows(
        () => requireCompactionRange({ until: new Date(NaN) }),
        InvalidArgumentError,
        'range.until must be a valid Date',
      );
    });

    it('refuses a negative, infinite or non-number olderThanMs, and olderThanMs with until', function () {
      for (const bad of [-1, Infinity, NaN, '5']) {
        expectThrows(
          () => requireCompactionRange({ olderThanMs: bad }),
          InvalidArgumentError,
          'range.olderThanMs must be a finite number >= 0',
        );
      }
      expect(requireCompactionRange({ olderThanMs: 0 })).to.deep.equal({ olderThanMs: 0 });
      expectThrows(
        () => requireCompactionRange({ olderThanMs: 5, until: at(0) }),
        InvalidArgumentError,
        'range.olderThanMs and range.until are mutually exclusive',
      );
    });

    it('takes event ids or times, not both, and not neither', function () {
      const both = 'range takes event ids or times, not both';
      expectThrows(() => requireCompactionRange({ fromEventId: 'a', since: at(0) }), InvalidArgumentError, both);
      expectThrows(() => requireCompactionRange({ toEventId: 'a', until: at(0) }), InvalidArgumentError, both);
      expectThrows(() => requireCompactionRange({ toEventId: 'a', olderThanMs: 1 }), InvalidArgumentError, both);
      expectThrows(
        () => requireCompactionRange({ snap: 'turn' }),
        InvalidArgumentError,
        'range must set fromEventId, toEventId, since, until or olderThanMs',
      );
      expect(requireCompactionRange({ until: at(0) })).to.deep.equal({ until: at(0) });
      expect(requireCompactionRange({ toEventId: 'a' })).to.deep.equal({ toEventId: 'a' });
    });

    it("takes snap 'turn' or 'tool-pair' only", function () {
      expect(requireCompactionRange({ fromEventId: 'a', snap: 'turn' }).snap).to.equal('turn');
      expect(requireCompactionRange({ fromEventId: 'a', snap: 'tool-pair' }).snap).to.equal('tool-pair');
      expectThrows(
        () => requireCompactionRange({ fromEventId: 'a', snap: 'step' }),
        InvalidArgumentError,
        "range.snap must be 'turn' or 'tool-pair'",
      );
    });

    it('refuses a since after its until; an instant range (since = until) is fine', function () {
      expectThrows(
        () => requireCompactionRange({ since: at(1), until: at(0) }),
        InvalidArgumentError,
        'range.since must not come after range.until',
      );
      expect(requireCompactionRange({ since: at(0), until: at(0) })).to.deep.equal({ since: at(0), until: at(0) });
    });
  });

  describe('resolving a range in the window', function () {
    it('widens event ids to whole turns: from the first event’s turn start to the end of the last event’s turn', function () {
      const w = threeTurns();
      expect(resolveCompactionRange(w, { fromEventId: w[1]!.id, toEventId: w[2]!.id }, at(0))).to.deep.equal({
        start: 0,
        end: 4,
      });
      expect(resolveCompactionRange(w, { fromEventId: w[2]!.id, toEventId: w[3]!.id }, at(0))).to.deep.equal({
        start: 2,
        end: 4,
      });
    });

    it('a missing from starts at the window’s start, a missing to ends at its end', function () {
      const w = threeTurns();
      expect(resolveCompactionRange(w, { toEventId: w[2]!.id }, at(0))).to.deep.equal({ start: 0, end: 4 });
      expect(resolveCompactionRange(w, { fromEventId: w[3]!.id }, at(0))).to.deep.equal({ start: 2, end: 6 });
    });

    it('never starts a range inside a tool exchange, even at a user message interleaved into it', function () {
      const w = [U('q'), call('c1'), U('interjection'), result('c1'), A('done')];
      expect(resolveCompactionRange(w, { fromEventId: w[2]!.id }, at(0))).to.deep.equal({ start: 0, end: 5 });
    });

    it("with snap 'tool-pair', starts only at a turn or at a step of the root agent", function () {
      const w = [U('q'), A('sub-agent note', 'sub'), A('answer')];
      expect(resolveCompactionRange(w, { fromEventId: w[1]!.id, snap: 'tool-pair' }, at(0))).to.deep.equal({ start: 0, end: 3 });
      expect(resolveCompactionRange(w, { fromEventId: w[2]!.id, snap: 'tool-pair' }, at(0))).to.deep.equal({ start: 2, end: 3 });
      const withSystem = [U('q'), A('a'), SYS('policy update'), A('answer')];
      expect(resolveCompactionRange(withSystem, { fromEventId: withSystem[2]!.id, snap: 'tool-pair' }, at(0))).to.deep.equal({
        start: 1,
        end: 4,
      });
    });

    it('the window’s first event is a valid start', function () {
      const w = threeTurns();
      expect(resolveCompactionRange(w, { fromEventId: w[0]!.id, toEventId: w[1]!.id }, at(0))).to.deep.equal({
        start: 0,
        end: 2,
      });
    });

    it('refuses an id not in the window, and a from after its to, naming them', function () {
      const w = threeTurns();
      expectThrows(
        () => resolveCompactionRange(w, { fromEventId: 'ghost' }, at(0)),
        InvalidArgumentError,
        'Event not found in the active window: ghost',
      );
      expectThrows(
        () => resolveCompactionRange(w, { fromEventId: w[3]!.id, toEventId: w[1]!.id }, at(0)),
        InvalidArgumentError,
        `fromEventId ${w[3]!.id} comes after toEventId ${w[1]!.id}`,
      );
      // One event is a range of its own.
      expect(resolveCompactionRange(w, { fromEventId: w[4]!.id, toEventId: w[4]!.id }, at(0))).to.deep.equal({
        start: 4,
        end: 6,
      });
    });

    it('since and until are inclusive bounds on the timestamps', function () {
      const w = timed();
      expect(resolveCompactionRange(w, { since: at(2000), until: at(3000) }, at(0))).to.deep.equal({ start: 2, end: 4 });
      expect(resolveCompactionRange(w, { since: at(3000) }, at(0))).to.deep.equal({ start: 2, end: 6 });
      expect(resolveCompactionRange(w, { until: at(1999) }, at(0))).to.deep.equal({ start: 0, end: 2 });
      expect(resolveCompactionRange(w, { until: at(2000) }, at(0))).to.deep.equal({ start: 0, end: 4 });
    });

    it('olderThanMs is strict: an event exactly that old is out, one a millisecond older is in', function () {
      const w = timed();
      // now - olderThanMs = at(2000): u2 (at 2000) is not older than it, a1 (at 1000) is.
      expect(resolveCompactionRange(w, { olderThanMs: 3000 }, at(5000))).to.deep.equal({ start: 0, end: 2 });
      expect(resolveCompactionRange(w, { olderThanMs: 2999 }, at(5000))).to.deep.equal({ start: 0, end: 4 });
    });

    it('a time range that selects no event resolves to null (nothing to compact)', function () {
      const w = timed();
      expect(resolveCompactionRange(w, { since: at(10_000) }, at(0))).to.equal(null);
      expect(resolveCompactionRange(w, { olderThanMs: 60_000 }, at(5000))).to.equal(null);
      expect(resolveCompactionRange([], { since: at(0) }, at(0))).to.equal(null);
    });

    it("snap 'tool-pair' widens only to the nearest step that splits no tool pair, inside one long turn", function () {
      const w = [U('task'), call('c1'), result('c1'), A('step 2'), call('c2'), result('c2'), A('done')];
      const range = { fromEventId: w[2]!.id, toEventId: w[4]!.id };
      expect(resolveCompactionRange(w, range, at(0))).to.deep.equal({ start: 0, end: 7 });
      expect(resolveCompactionRange(w, { ...range, snap: 'tool-pair' }, at(0))).to.deep.equal({ start: 1, end: 6 });
    });

    it("snap 'tool-pair' never starts a range at a sub-agent's or a synthetic assistant message", function () {
      const summary = event(Messages.assistant('summary'), { metadata: { synthetic: true } });
      const w = [U('task'), A('one'), A('sub', 'orch.sub'), summary, A('two'), A('three')];
      const snapped = resolveCompactionRange(w, { fromEventId: w[3]!.id, toEventId: w[4]!.id, snap: 'tool-pair' }, at(0));
      expect(snapped).to.deep.equal({ start: 1, end: 5 });
    });
  });

  it('rangeBounds names the first and last event of the resolved range', function () {
    const w = threeTurns();
    expect(rangeBounds(w, { start: 2, end: 4 })).to.deep.equal({ fromEventId: w[2]!.id, toEventId: w[3]!.id });
  });

  it("placeInWindow puts the strategy's result in the range's place and keeps everything else of it", function () {
    const w = threeTurns();
    const summary = A('summary of turn 2');
    const usage = { summarizerCalls: 1 } as unknown as NonNullable<CompactionResult['usage']>;
    const placed = placeInWindow(w, { start: 2, end: 4 }, new CompactionResult([summary], [w[2]!, w[3]!], 9, undefined, usage));
    expect(placed.compactedEvents.map((e) => e.id)).to.deep.equal([w[0]!.id, w[1]!.id, summary.id, w[4]!.id, w[5]!.id]);
    expect(placed.archivedEvents).to.deep.equal([w[2], w[3]]);
    expect(placed.tokensEstimatedSaved).to.equal(9);
    expect(placed.usage).to.deep.equal(usage);
    const noop = placeInWindow(w, { start: 2, end: 4 }, CompactionResult.noop(w.slice(2, 4), 'summarization-failed'));
    expect(noop.skipReason).to.equal('summarization-failed');
    expect(noop.compactedEvents).to.deep.equal(w);
  });
});
