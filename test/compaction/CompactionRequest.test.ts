import { expect } from 'chai';
import {
  CompactionRequest,
  CompactionResult,
  InvalidArgumentError,
  Messages,
  Session,
  SlidingWindowCompactionStrategy,
  TokenCountCompactionStrategy,
  TurnWindowCompactionStrategy,
  type SessionEvent,
} from 'session-compaction';
import { METADATA_MASKED_FROM, type SessionLike } from 'session-compaction/spi';
import {
  A,
  CharEstimator,
  SA,
  SU,
  U,
  compactionRequest,
  event,
  expectRejects,
  expectThrows,
  fixtureSession,
} from '../support/fixtures.js';

describe('CompactionRequest', function () {
  it('1: an empty window has zero turns', function () {
    expect(compactionRequest([]).currentTurnCount).to.equal(0);
  });

  it('2: three root user/assistant pairs are three turns', function () {
    const req = compactionRequest([U('q1'), A('a1'), U('q2'), A('a2'), U('q3'), A('a3')]);
    expect(req.currentTurnCount).to.equal(3);
  });

  it('3: a synthetic user event (shadow prompt) does not count as a turn', function () {
    expect(compactionRequest([SU(), SA('summary'), U('q1'), A('a1')]).currentTurnCount).to.equal(1);
  });

  it('4: a window of assistant events only has zero turns', function () {
    expect(compactionRequest([A('preamble'), A('more preamble')]).currentTurnCount).to.equal(0);
  });

  it('5: branch user events are turn-internal and do not count', function () {
    const req = compactionRequest([
      U('root-q1'),
      A('root-a1'),
      U('sub-agent-q', 'orch.researcher'),
      A('sub-agent-a', 'orch.researcher'),
      U('root-q2'),
      A('root-a2'),
    ]);
    expect(req.currentTurnCount).to.equal(2);
  });

  it('6: currentEventCount counts every event of the window, synthetic included', function () {
    expect(compactionRequest([U('q1'), A('a1')]).currentEventCount).to.equal(2);
    expect(compactionRequest([SU(), SA('s'), U('q1')]).currentEventCount).to.equal(3);
  });

  it('7: of(null, []) and of(session, null) throw InvalidArgumentError', function () {
    expectThrows(
      () => CompactionRequest.of(null as unknown as SessionLike, []),
      InvalidArgumentError,
      'session must not be null',
    );
    expectThrows(
      () => CompactionRequest.of(fixtureSession(), null as unknown as []),
      InvalidArgumentError,
      'events must not be null',
    );
  });

  it('accepts any session-shaped object and freezes its event list', function () {
    const like: SessionLike = { id: 's-1', userId: 'u', createdAt: new Date(), expiresAt: null, metadata: {} };
    const req = CompactionRequest.of(like, [U('q')]);
    expect(req.session).to.be.instanceOf(Session);
    expect(req.session.id).to.equal('s-1');
    expect(Object.isFrozen(req.events)).to.equal(true);
  });
});

describe('CompactionResult', function () {
  it('eventsRemoved is the number of archived events; noop() archives nothing and saves 0', function () {
    const events = [U('a'), A('b')];
    expect(new CompactionResult([events[1]!], [events[0]!], 5).eventsRemoved).to.equal(1);
    const noop = CompactionResult.noop(events);
    expect(noop.compactedEvents).to.deep.equal(events);
    expect(noop.archivedEvents).to.deep.equal([]);
    expect(noop.tokensEstimatedSaved).to.equal(0);
    expect(noop.eventsRemoved).to.equal(0);
  });

  it('null lists throw InvalidArgumentError', function () {
    expectThrows(() => new CompactionResult(null as unknown as [], [], 0), InvalidArgumentError, 'compactedEvents');
    expectThrows(() => new CompactionResult([], null as unknown as [], 0), InvalidArgumentError, 'archivedEvents');
  });
});

describe('CompactionRequest: options, originals and instructions', function () {
  type Options = Parameters<typeof CompactionRequest.of>[2];
  const masked = (original: SessionEvent, text: string) =>
    event(Messages.user(text), { metadata: { [METADATA_MASKED_FROM]: original.id } });

  it('null options read as none: no originals, no instructions', function () {
    const original = U('the full text');
    const copy = masked(original, 'excerpt');
    const req = CompactionRequest.of(fixtureSession(), [copy], null as unknown as Options);
    expect(req.instructions).to.deep.equal([]);
    expect(req.originalOf(copy)).to.equal(copy);
  });

  it('options without originals or instructions read as none', function () {
    const req = CompactionRequest.of(fixtureSession(), [U('q')], {});
    expect(req.instructions).to.deep.equal([]);
    expect(req.originals.size).to.equal(0);
  });

  it('originalOf gives the original of a masked copy when it is known, else the event itself', function () {
    const original = U('the full text');
    const copy = masked(original, 'excerpt');
    const orphan = masked(U('never given'), 'excerpt');
    const req = CompactionRequest.of(fixtureSession(), [copy, orphan], { originals: [original] });
    expect(req.originalOf(copy)).to.equal(original);
    expect(req.originalOf(orphan)).to.equal(orphan);
    expect(req.originalOf(original)).to.equal(original);
  });

  it('originalOf ignores a masked-from marker that is not an event id', function () {
    const original = U('the full text');
    const odd = event(Messages.user('x'), { metadata: { [METADATA_MASKED_FROM]: 42 } });
    const req = CompactionRequest.of(fixtureSession(), [odd], { originals: [original] });
    expect(req.originalOf(odd)).to.equal(odd);
  });

  it('keeps a copy of the instructions: a caller changing its array later changes nothing', function () {
    const instructions = ['keep the numbers'];
    const req = CompactionRequest.of(fixtureSession(), [U('q')], { instructions });
    instructions.push('added later');
    expect(req.instructions).to.deep.equal(['keep the numbers']);
    expect(Object.isFrozen(req.instructions)).to.equal(true);
  });

  it('withEvents is the same request over other events: session, originals and instructions are kept', function () {
    const original = U('the full text');
    const copy = masked(original, 'excerpt');
    const req = CompactionRequest.of(fixtureSession(), [U('a'), copy], { originals: [original], instructions: ['be brief'] });
    const stage = req.withEvents([copy]);
    expect(stage.events).to.deep.equal([copy]);
    expect(stage.currentEventCount).to.equal(1);
    expect(stage.session).to.equal(req.session);
    expect(stage.instructions).to.deep.equal(['be brief']);
    expect(stage.originalOf(copy)).to.equal(original);
  });

  it('withEvents with other originals replaces them', function () {
    const first = U('first original');
    const second = U('second original');
    const copy = event(Messages.user('x'), { metadata: { [METADATA_MASKED_FROM]: second.id } });
    const stage = CompactionRequest.of(fixtureSession(), [copy], { originals: [first] }).withEvents([copy], [second]);
    expect(stage.originalOf(copy)).to.equal(second);
    expect(stage.originals.has(first.id)).to.equal(false);
  });

  it('rejects undefined session and events like null ones', function () {
    expectThrows(
      () => CompactionRequest.of(undefined as unknown as SessionLike, []),
      InvalidArgumentError,
      'session must not be null',
    );
    expectThrows(
      () => CompactionRequest.of(fixtureSession(), undefined as unknown as []),
      InvalidArgumentError,
      'events must not be null',
    );
  });

  it('is frozen: a trigger or strategy cannot change what the next one sees', function () {
    const req = CompactionRequest.of(fixtureSession(), [U('q')]);
    expect(Object.isFrozen(req)).to.equal(true);
  });
});

describe('the window strategies: a missing request', function () {
  const strategies = [
    new SlidingWindowCompactionStrategy({ tokenCountEstimator: new CharEstimator() }),
    new TurnWindowCompactionStrategy({ tokenCountEstimator: new CharEstimator() }),
    new TokenCountCompactionStrategy({ tokenCountEstimator: new CharEstimator() }),
  ];

  it('is rejected with InvalidArgumentError, null and undefined alike', async function () {
    for (const strategy of strategies) {
      for (const request of [null, undefined]) {
        await expectRejects(
          strategy.compact(request as unknown as CompactionRequest),
          InvalidArgumentError,
          'request must not be null',
        );
      }
    }
  });
});
