import { expect } from 'chai';
import { InvalidArgumentError, SessionEvent, TurnWindowCompactionStrategy, type CompactionRequest } from 'session-compaction';
import {
  A,
  CharEstimator,
  SA,
  SU,
  TC,
  TR,
  U,
  compactionRequest,
  event,
  expectRejects,
  expectThrows,
  texts,
} from '../../support/fixtures.js';

const turnWindow = (maxTurns: number) => new TurnWindowCompactionStrategy({ maxTurns, tokenCountEstimator: new CharEstimator() });
const run = (maxTurns: number, events: Parameters<typeof compactionRequest>[0]) =>
  turnWindow(maxTurns).compact(compactionRequest(events));
const turns = (n: number) => Array.from({ length: n }, (_, i) => [U(`q${i + 1}`), A(`a${i + 1}`)]).flat();

describe('TurnWindowCompactionStrategy', function () {
  it('44: maxTurns 5 over 3 turns is a no-op', async function () {
    const r = await run(5, turns(3));
    expect(r.archivedEvents).to.deep.equal([]);
    expect(r.eventsRemoved).to.equal(0);
    expect(r.compactedEvents).to.have.length(6);
  });

  it('45: maxTurns 3 over exactly 3 turns is a no-op', async function () {
    const r = await run(3, turns(3));
    expect(r.archivedEvents).to.deep.equal([]);
    expect(r.eventsRemoved).to.equal(0);
  });

  it('46: maxTurns 2 over 4 turns keeps the last 2 whole turns', async function () {
    const r = await run(2, turns(4));
    expect(texts(r.compactedEvents)).to.deep.equal(['q3', 'a3', 'q4', 'a4']);
    expect(texts(r.archivedEvents)).to.deep.equal(['q1', 'a1', 'q2', 'a2']);
    expect(r.eventsRemoved).to.equal(4);
  });

  it('47: a prior summary pair is kept first and is not a turn', async function () {
    const r = await run(2, [SU(), SA('prior summary'), ...turns(4)]);
    expect(r.compactedEvents).to.have.length(6);
    expect(r.compactedEvents[0]!.isSynthetic()).to.equal(true);
    expect(r.compactedEvents[1]!.isSynthetic()).to.equal(true);
    expect(r.compactedEvents[1]!.text).to.equal('prior summary');
    expect(r.compactedEvents[2]!.text).to.equal('q3');
  });

  it('48: several summary pairs are all kept, then the last turn', async function () {
    const r = await run(1, [SU(), SA('summary-1'), SU(), SA('summary-2'), ...turns(2)]);
    expect(r.compactedEvents).to.have.length(6);
    expect(r.compactedEvents.slice(0, 4).every((e) => e.isSynthetic())).to.equal(true);
    expect(texts(r.compactedEvents.slice(4))).to.deep.equal(['q2', 'a2']);
  });

  it('49: the preamble before the first turn is preserved', async function () {
    const r = await run(1, [A('system boot info'), ...turns(2)]);
    expect(texts(r.compactedEvents)).to.deep.equal(['system boot info', 'q2', 'a2']);
    expect(texts(r.archivedEvents)).to.deep.equal(['q1', 'a1']);
  });

  it('50: a multi-step turn is archived whole', async function () {
    const r = await run(2, [U('u1'), A('step1'), A('step2'), U('u2'), A('a2'), U('u3'), A('a3')]);
    expect(texts(r.archivedEvents)).to.deep.equal(['u1', 'step1', 'step2']);
    expect(texts(r.compactedEvents)).to.deep.equal(['u2', 'a2', 'u3', 'a3']);
  });

  it('51: an empty window is a no-op', async function () {
    const r = await run(3, []);
    expect(r.compactedEvents).to.deep.equal([]);
    expect(r.archivedEvents).to.deep.equal([]);
    expect(r.eventsRemoved).to.equal(0);
  });

  it('52: maxTurns 0 throws "maxTurns must be greater than 0"; compact(null) rejects; the default is 10', async function () {
    expectThrows(
      () => new TurnWindowCompactionStrategy({ maxTurns: 0 }),
      InvalidArgumentError,
      'maxTurns must be greater than 0',
    );
    await expectRejects(turnWindow(2).compact(null as unknown as CompactionRequest), InvalidArgumentError);
    expect(new TurnWindowCompactionStrategy().getMaxTurns()).to.equal(10);
  });

  it('53: tokensEstimatedSaved is non-negative, and positive when tool events are archived (default estimator)', async function () {
    const plain = await new TurnWindowCompactionStrategy({ maxTurns: 1 }).compact(compactionRequest(turns(2)));
    expect(plain.tokensEstimatedSaved).to.be.at.least(0);
    const tools = await new TurnWindowCompactionStrategy({ maxTurns: 1 }).compact(
      compactionRequest([U("What's the weather?"), TC(), TR(), U('Thanks'), A("You're welcome")]),
    );
    expect(tools.archivedEvents).to.have.length(3);
    expect(tools.tokensEstimatedSaved).to.be.greaterThan(0);
  });

  it('53 (CHAR): tokensEstimatedSaved is the CHAR cost of the archived turn', async function () {
    const r = await run(1, turns(2));
    expect(r.tokensEstimatedSaved).to.equal('User: q1'.length + 'Assistant: a1'.length);
  });

  it('54: branch events stay inside their turn and are archived with it', async function () {
    const r = await run(2, [U('u1'), A('a1'), U('sub-q', 'sub'), A('sub-a', 'sub'), U('u2'), A('a2'), U('u3'), A('a3')]);
    expect(compactionRequest(r.compactedEvents).currentTurnCount + 1).to.equal(3);
    expect(texts(r.archivedEvents)).to.deep.equal(['u1', 'a1', 'sub-q', 'sub-a']);
    expect(texts(r.compactedEvents)).to.deep.equal(['u2', 'a2', 'u3', 'a3']);
  });

  it('55: branch events before the first root user are preamble and kept', async function () {
    const r = await run(1, [U('sub-q', 'sub'), A('sub-a', 'sub'), U('u1'), A('a1'), U('u2'), A('a2')]);
    expect(texts(r.archivedEvents)).to.deep.equal(['u1', 'a1']);
    expect(texts(r.compactedEvents)).to.deep.equal(['sub-q', 'sub-a', 'u2', 'a2']);
  });

  it('a window with no root user event is always a no-op (zero turns)', async function () {
    const events = [A('a'), U('b', 'sub'), A('c')];
    const r = await run(1, events);
    expect(r.compactedEvents).to.deep.equal(events);
    expect(r.archivedEvents).to.deep.equal([]);
  });
});

describe('TurnWindowCompactionStrategy: pinned events', function () {
  const pin = (e: SessionEvent) => event(e.message, { metadata: { [SessionEvent.METADATA_PINNED]: true } });
  const ids = (events: readonly SessionEvent[]) => events.map((e) => e.id);

  it('a pinned event of a leaving turn stays in the window; the rest of its turn is archived', async function () {
    const events = [U('q1'), pin(A('a1')), U('q2'), A('a2'), U('q3'), A('a3')];
    const r = await run(2, events);
    expect(ids(r.compactedEvents)).to.deep.equal(ids([events[1]!, ...events.slice(2)]));
    expect(ids(r.archivedEvents)).to.deep.equal(ids([events[0]!]));
  });

  it('when every event that would leave is pinned, the window stays exactly as it was', async function () {
    const events = [pin(U('q1')), pin(A('a1')), SA('summary'), U('q2'), A('a2')];
    const r = await run(1, events);
    expect(r.archivedEvents).to.deep.equal([]);
    expect(ids(r.compactedEvents)).to.deep.equal(ids(events));
  });
});
