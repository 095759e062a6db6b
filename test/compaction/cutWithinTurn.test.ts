import { expect } from 'chai';
import fc from 'fast-check';
import {
  InvalidArgumentError,
  Messages,
  SlidingWindowCompactionStrategy,
  TokenCountCompactionStrategy,
  snapToTurnStart,
  type SessionEvent,
} from 'session-compaction';
import { CUT_WITHIN_TURN_MODES } from 'session-compaction/spi';
import { stepStarts, toolPairSafeCut } from '../../src/compaction/cutWithinTurn.js';
import { A, CharEstimator, SYS, U, compactionRequest, event, expectThrows } from '../support/fixtures.js';
import { skipWithReason } from '../support/services.js';
import { call, long, result, toolPairsIntact } from '../support/beyondEvents.js';
import { hasMiniSwe, miniSweSessions, recordedDataHint, toEvents } from '../support/recorded.js';

const est = new CharEstimator();

/** One long agent turn: a task, then `steps` call/result pairs. */
function agentRun(steps: number, size = 200): SessionEvent[] {
  const events = [SYS('You are a coding agent.'), U('Fix the failing test.')];
  for (let i = 0; i < steps; i++)
    events.push(call(`c${i}`, 'bash', `{"command":"step ${i}"}`, `thought ${i}`), result(`c${i}`, long(`out ${i}`, size)));
  return events;
}

describe("cutWithinTurn: 'tool-pair-safe'", function () {
  it("'never' archives the whole window when no turn starts after the cut, byte for byte", async function () {
    const events = agentRun(10);
    const never = await new SlidingWindowCompactionStrategy({
      maxEvents: 6,
      tokenCountEstimator: est,
      cutWithinTurn: 'never',
    }).compact(compactionRequest(events));
    expect(never.compactedEvents).to.deep.equal([]);
    expect(never.archivedEvents).to.have.length(events.length);
  });

  it('SlidingWindow: with no later turn start, cuts at the first step start after the raw cut', async function () {
    const events = agentRun(10);
    const r = await new SlidingWindowCompactionStrategy({
      maxEvents: 6,
      tokenCountEstimator: est,
      cutWithinTurn: 'tool-pair-safe',
    }).compact(compactionRequest(events));
    // The raw cut keeps 6 events = the last 3 pairs, and a pair starts exactly there.
    expect(r.compactedEvents.map((e) => e.id)).to.deep.equal(events.slice(-6).map((e) => e.id));
    expect(toolPairsIntact(r.compactedEvents)).to.equal(true);
  });

  it('SlidingWindow: a raw cut between a call and its result moves forward to the next call', async function () {
    const events = agentRun(10);
    const r = await new SlidingWindowCompactionStrategy({
      maxEvents: 5,
      tokenCountEstimator: est,
      cutWithinTurn: 'tool-pair-safe',
    }).compact(compactionRequest(events));
    expect(r.compactedEvents.map((e) => e.id)).to.deep.equal(events.slice(-4).map((e) => e.id));
  });

  it('TokenCount: keeps the newest whole steps that fit', async function () {
    const events = agentRun(10, 500);
    const r = await new TokenCountCompactionStrategy({
      maxTokens: 1700,
      tokenCountEstimator: est,
      cutWithinTurn: 'tool-pair-safe',
    }).compact(compactionRequest(events));
    expect(r.compactedEvents.length).to.be.greaterThan(0);
    expect(r.compactedEvents[0]!.hasToolCalls()).to.equal(true);
    expect(toolPairsIntact(r.compactedEvents)).to.equal(true);
    expect(r.compactedEvents.at(-1)).to.equal(events.at(-1));
  });

  it('still prefers a later turn start when there is one (the snap to the next turn start)', function () {
    const events = [U('a'), call('c1'), result('c1', 'x'), A('done'), U('b'), A('ok')];
    expect(toolPairSafeCut(events, 2)).to.equal(4);
    expect(snapToTurnStart(events, 2)).to.equal(4);
  });

  it('never cuts inside a parallel call: an assistant message with two calls is one step with both results', function () {
    const both = event(
      Messages.assistant(null, { toolCalls: [Messages.toolCall('p1', 'a', '{}'), Messages.toolCall('p2', 'b', '{}')] }),
    );
    const events = [U('go'), both, result('p1', 'x', 'a'), A('thinking'), result('p2', 'y', 'b'), A('done')];
    expect(stepStarts(events)).to.deep.equal([1, 5]);
  });

  it('a tool result whose call is not in the window does not close an open call/result pair', function () {
    // c1 is answered at 4; the result at 2 answers a call archived earlier. The user message at 3 sits inside c1's pair.
    const events = [U('task'), call('c1'), result('gone', 'x'), U('interjection'), result('c1', 'y'), A('done')];
    expect(toolPairSafeCut(events, 2)).to.equal(5);
  });

  it('knows three modes, and a strategy accepts each of them by name', function () {
    expect([...CUT_WITHIN_TURN_MODES]).to.deep.equal(['agent-safe', 'tool-pair-safe', 'never']);
    for (const cutWithinTurn of CUT_WITHIN_TURN_MODES) {
      expect(new SlidingWindowCompactionStrategy({ cutWithinTurn }).cutWithinTurn).to.equal(cutWithinTurn);
    }
  });

  it('rejects an unknown mode', function () {
    expectThrows(
      () => new SlidingWindowCompactionStrategy({ cutWithinTurn: 'anywhere' as never }),
      InvalidArgumentError,
      "cutWithinTurn must be 'agent-safe', 'tool-pair-safe' or 'never'",
    );
  });

  it('property: the kept window never holds a result without its call, and the cut only moves forward', function () {
    // An arbitrary interleaving of user messages, assistant texts and call/result pairs, results possibly late.
    const arbStep = fc.oneof(
      fc.constant<'user' | 'text'>('user'),
      fc.constant<'user' | 'text'>('text'),
      fc.record({ calls: fc.integer({ min: 1, max: 3 }), lag: fc.integer({ min: 0, max: 2 }) }),
    );
    fc.assert(
      fc.property(fc.array(arbStep, { maxLength: 30 }), fc.nat(40), (steps, rawCut) => {
        const events: SessionEvent[] = [];
        const pending: { id: string; due: number }[] = [];
        let n = 0;
        steps.forEach((s, i) => {
          for (const p of pending.filter((p) => p.due <= i)) events.push(result(p.id, 'r'));
          pending.splice(0, pending.length, ...pending.filter((p) => p.due > i));
          if (s === 'user') events.push(U('u'));
          else if (s === 'text') events.push(A('a'));
          else {
            const ids = Array.from({ length: s.calls }, () => `k${n++}`);
            events.push(event(Messages.assistant(null, { toolCalls: ids.map((id) => Messages.toolCall(id, 't', '{}')) })));
            for (const id of ids) pending.push({ id, due: i + 1 + s.lag });
          }
        });
        for (const p of pending) events.push(result(p.id, 'r'));
        const cut = toolPairSafeCut(events, Math.min(rawCut, events.length));
        expect(cut).to.be.at.least(Math.min(rawCut, events.length));
        expect(toolPairsIntact(events.slice(cut))).to.equal(true);
        // No call before the cut is answered after it.
        const before = new Set(
          events
            .slice(0, cut)
            .flatMap((e) => (e.message.type === 'assistant' ? (e.message.toolCalls ?? []).map((c) => c.id) : [])),
        );
        const after = events.slice(cut).flatMap((e) => (e.message.type === 'tool' ? e.message.responses.map((r) => r.id) : []));
        expect(after.some((id) => before.has(id))).to.equal(false);
      }),
      { numRuns: 300 },
    );
  });

  describe('on the mini-swe-agent recordings', function () {
    before(function () {
      if (!hasMiniSwe()) skipWithReason(this, `mini-swe-agent recordings not found (${recordedDataHint})`);
    });

    it('SlidingWindow and TokenCount keep every tool result with its call and the last step intact', async function () {
      const strategies = [
        new SlidingWindowCompactionStrategy({ maxEvents: 40, cutWithinTurn: 'tool-pair-safe' }),
        new TokenCountCompactionStrategy({ maxTokens: 8000, cutWithinTurn: 'tool-pair-safe' }),
      ];
      let checked = 0;
      for (const session of miniSweSessions()) {
        const events = toEvents(session);
        const lastStep = events.slice(stepStarts(events).at(-1)!);
        for (const strategy of strategies) {
          const r = await strategy.compact(compactionRequest(events));
          expect(r.compactedEvents.length, session.sessionId).to.be.greaterThan(0);
          expect(toolPairsIntact(r.compactedEvents), session.sessionId).to.equal(true);
          expect(
            r.compactedEvents.slice(-lastStep.length).map((e) => e.id),
            session.sessionId,
          ).to.deep.equal(lastStep.map((e) => e.id));
          checked++;
        }
      }
      expect(checked).to.equal(2 * miniSweSessions().length);
    });
  });
});
