import { expect } from 'chai';
import { InvalidArgumentError, SlidingWindowCompactionStrategy, type CompactionRequest } from 'session-compaction';
import {
  A,
  CharEstimator,
  SA,
  SU,
  TC,
  TR,
  U,
  compactionRequest,
  expectRejects,
  expectThrows,
  msgs,
  texts,
} from '../../support/fixtures.js';

// These scenarios assert the 'never' cut, which is an explicit option since 'agent-safe' became the default.
const sliding = (maxEvents: number) =>
  new SlidingWindowCompactionStrategy({ maxEvents, tokenCountEstimator: new CharEstimator(), cutWithinTurn: 'never' });
const run = (maxEvents: number, events: Parameters<typeof compactionRequest>[0]) =>
  sliding(maxEvents).compact(compactionRequest(events));

describe('SlidingWindowCompactionStrategy', function () {
  it('32: maxEvents 5 over 3 events is a no-op', async function () {
    const r = await run(5, msgs(3));
    expect(r.compactedEvents).to.have.length(3);
    expect(r.archivedEvents).to.deep.equal([]);
    expect(r.eventsRemoved).to.equal(0);
  });

  it('33: maxEvents 3 over exactly 3 events is a no-op', async function () {
    const r = await run(3, msgs(3));
    expect(r.compactedEvents).to.have.length(3);
    expect(r.eventsRemoved).to.equal(0);
  });

  it('34: maxEvents 3 over msg-1..5 keeps msg-3..5 and archives msg-1, msg-2', async function () {
    const r = await run(3, msgs(5));
    expect(texts(r.compactedEvents)).to.deep.equal(['msg-3', 'msg-4', 'msg-5']);
    expect(texts(r.archivedEvents)).to.deep.equal(['msg-1', 'msg-2']);
  });

  it('35: synthetic events are kept first, never archived, and use no slot', async function () {
    const r = await run(3, [SU('shadow'), SA('prior summary'), ...msgs(4)]);
    expect(texts(r.compactedEvents)).to.deep.equal(['shadow', 'prior summary', 'msg-2', 'msg-3', 'msg-4']);
    expect(r.compactedEvents[0]!.isSynthetic() && r.compactedEvents[0]!.messageType === 'user').to.equal(true);
    expect(r.compactedEvents[1]!.text).to.equal('prior summary');
    expect(texts(r.archivedEvents)).to.deep.equal(['msg-1']);
  });

  it('36: maxEvents 2 over 7 events removes 5 and keeps 2', async function () {
    const r = await run(2, msgs(7));
    expect(r.eventsRemoved).to.equal(5);
    expect(r.compactedEvents).to.have.length(2);
  });

  it('37: maxEvents 0 throws "maxEvents must be greater than 0"; compact(null) rejects', async function () {
    expectThrows(
      () => new SlidingWindowCompactionStrategy({ maxEvents: 0 }),
      InvalidArgumentError,
      'maxEvents must be greater than 0',
    );
    expectThrows(
      () => new SlidingWindowCompactionStrategy({ maxEvents: -3 }),
      InvalidArgumentError,
      'maxEvents must be greater than 0',
    );
    await expectRejects(sliding(3).compact(null as unknown as CompactionRequest), InvalidArgumentError);
  });

  it('37 (defaults): maxEvents defaults to 20', function () {
    expect(new SlidingWindowCompactionStrategy().getMaxEvents()).to.equal(20);
    expect(SlidingWindowCompactionStrategy.DEFAULT_MAX_EVENTS).to.equal(20);
  });

  it('38: a cut landing on an assistant event moves to the next turn start', async function () {
    const r = await run(3, [U('u1'), A('a1'), U('u2'), A('a2'), U('u3'), A('a3')]);
    expect(texts(r.compactedEvents)).to.deep.equal(['u3', 'a3']);
    expect(r.archivedEvents).to.have.length(4);
  });

  it('39: the kept window starts with a user event', async function () {
    const r = await run(2, [U('q1'), A('r1'), A('r1b'), U('q2'), A('r2')]);
    expect(texts(r.compactedEvents)).to.deep.equal(['q2', 'r2']);
    expect(texts(r.archivedEvents)).to.deep.equal(['q1', 'r1', 'r1b']);
  });

  it('40: a tool call and its result are archived together and cost tokens (default estimator)', async function () {
    const events = [U("What's the weather?"), TC(), TR(), U('Thanks'), A("You're welcome")];
    const r = await new SlidingWindowCompactionStrategy({ maxEvents: 2 }).compact(compactionRequest(events));
    expect(r.archivedEvents).to.have.length(3);
    expect(r.archivedEvents.map((e) => e.messageType)).to.deep.equal(['user', 'assistant', 'tool']);
    expect(r.tokensEstimatedSaved).to.be.greaterThan(0);
  });

  it('41: branch events use no slot and are archived with the turn they belong to', async function () {
    const r = await run(2, [U('u1'), A('a1'), U('sub-q', 'sub'), A('sub-a', 'sub'), U('u2'), A('a2')]);
    expect(texts(r.compactedEvents)).to.deep.equal(['u2', 'a2']);
    expect(texts(r.archivedEvents)).to.deep.equal(['u1', 'a1', 'sub-q', 'sub-a']);
  });

  it('42: maxEvents 4 over 4 root + 2 branch events is a no-op', async function () {
    const r = await run(4, [U('u1'), A('a1'), U('sub-q', 'sub'), A('sub-a', 'sub'), U('u2'), A('a2')]);
    expect(r.archivedEvents).to.deep.equal([]);
    expect(r.compactedEvents).to.have.length(6);
  });

  it('43: one long turn with no later turn start is archived whole, leaving an empty window', async function () {
    const r = await run(2, [U('u1'), A('a1'), A('a2')]);
    expect(texts(r.archivedEvents)).to.deep.equal(['u1', 'a1', 'a2']);
    expect(r.compactedEvents).to.deep.equal([]);
  });

  it('tokensEstimatedSaved is the CHAR cost of the archived events', async function () {
    const r = await run(1, [U('hello'), A('world'), U('next')]);
    expect(r.tokensEstimatedSaved).to.equal('User: hello'.length + 'Assistant: world'.length);
  });

  it('a no-op returns the request events unchanged, synthetic ones in their original positions', async function () {
    const events = [U('q1'), SU(), SA('s'), A('a1')];
    const r = await run(5, events);
    expect(r.compactedEvents).to.deep.equal(events);
    expect(r.tokensEstimatedSaved).to.equal(0);
  });

  it('estimates with the configured estimator', async function () {
    const est = new CharEstimator();
    await new SlidingWindowCompactionStrategy({ maxEvents: 1, tokenCountEstimator: est }).compact(
      compactionRequest([U('x1'), U('x2'), U('x3')]),
    );
    expect(est.seen).to.deep.equal(['User: x1', 'User: x2']);
  });
});
