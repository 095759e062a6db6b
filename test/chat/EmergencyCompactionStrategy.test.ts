import { expect } from 'chai';
import fc from 'fast-check';
import { Messages, type SessionEvent } from 'session-compaction';
import { EmergencyCompactionStrategy } from 'session-compaction/spi';
import { CharEstimator, SYS, U, compactionRequest, event } from '../support/fixtures.js';
import { eventSequenceArb, propertyParams } from '../support/arbitraries.js';
import { call, long, result, toolPairsIntact } from '../support/beyondEvents.js';

const est = new CharEstimator();
const ids = (events: readonly SessionEvent[]) => events.map((e) => e.id);

/** One long agent turn: a task, then call/result pairs. */
function agentRun(steps: number): SessionEvent[] {
  const events = [SYS('You are a coding agent.'), U('Fix the failing test.')];
  for (let i = 0; i < steps; i++) events.push(call(`c${i}`), result(`c${i}`, long(`out ${i}`, 300)));
  return events;
}

describe('EmergencyCompactionStrategy (the mechanical step of overflow recovery)', function () {
  it('archives the oldest steps of one long turn, keeping the task and the latest step, calls with their results', async function () {
    const events = agentRun(8);
    const r = await new EmergencyCompactionStrategy(900, est).compact(compactionRequest(events));
    expect(r.archivedEvents.length).to.be.greaterThan(0);
    expect(r.compactedEvents.map((e) => e.text)).to.include('Fix the failing test.');
    expect(ids(r.compactedEvents).slice(-2)).to.deep.equal(ids(events).slice(-2));
    expect(toolPairsIntact(r.compactedEvents)).to.equal(true);
  });

  it('never archives the current input, a pinned event or a summary, however small the budget', async function () {
    const pinned = event(Messages.user('the contract number is 42'), { metadata: { pinned: true } });
    const summary = event(Messages.assistant('earlier: setup done'), { metadata: { synthetic: true } });
    const input = U('what next?');
    const events = [summary, pinned, ...agentRun(4).slice(1), input];
    const r = await new EmergencyCompactionStrategy(1, est, new Set([input.id])).compact(compactionRequest(events));
    expect(ids(r.compactedEvents)).to.include.members([summary.id, pinned.id, input.id]);
    expect(ids(r.archivedEvents)).to.not.include.members([summary.id, pinned.id, input.id]);
  });

  it('property: whatever the window and the budget, the input, pinned events and summaries stay and no pair is split', function () {
    fc.assert(
      fc.asyncProperty(eventSequenceArb({ maxLength: 30 }), fc.integer({ min: 1, max: 600 }), async (events, budget) => {
        const input = events.at(-1);
        const keep = new Set(input === undefined ? [] : [input.id]);
        const r = await new EmergencyCompactionStrategy(budget, est, keep).compact(compactionRequest(events));
        const kept = new Set(ids(r.compactedEvents));
        for (const e of events) {
          if (keep.has(e.id) || e.isPinned() || e.isSynthetic()) expect(kept.has(e.id), e.id).to.equal(true);
        }
        expect(r.compactedEvents.length + r.archivedEvents.length).to.equal(events.length);
        if (toolPairsIntact(events)) expect(toolPairsIntact(r.compactedEvents)).to.equal(true);
      }),
      propertyParams(),
    );
  });
});
