import { expect } from 'chai';
import { CompactionRequest, CompactionResult, InvalidArgumentError, Session } from 'session-compaction';
import type { SessionLike } from 'session-compaction/spi';
import { A, SA, SU, U, compactionRequest, expectThrows, fixtureSession } from '../support/fixtures.js';

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
