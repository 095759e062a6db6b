import { expect } from 'chai';
import {
  CompactionResult,
  Messages,
  TokenCountCompactionStrategy,
  type CompactionRequest,
  type SessionEvent,
} from 'session-compaction';
import { turnSafeStrategy } from '../../src/chat/turnSafeStrategy.js';
import { CharEstimator, SYS, U, compactionRequest, event } from '../support/fixtures.js';
import { call, long, result } from '../support/beyondEvents.js';
import { silent } from './support/harness.js';

const est = new CharEstimator();
const ids = (events: readonly SessionEvent[]) => events.map((e) => e.id);

function agentRun(steps: number): SessionEvent[] {
  const events = [SYS('You are a coding agent.'), U('Fix the failing test.')];
  for (let i = 0; i < steps; i++) events.push(call(`c${i}`), result(`c${i}`, long(`out ${i}`, 300)));
  return events;
}

describe('turnSafeStrategy (compactions inside a turn)', function () {
  it("puts back the turn's opening message a strategy archived to meet its budget, and keeps the rest of its work", async function () {
    const events = agentRun(6);
    // Too small for the task and the latest step together: TokenCount drops the task.
    const inner = new TokenCountCompactionStrategy({ maxTokens: 400, tokenCountEstimator: est });
    const plain = await inner.compact(compactionRequest(events));
    expect(ids(plain.archivedEvents)).to.include(events[1]!.id);

    const r = await turnSafeStrategy(inner, new Set(), silent, est).compact(compactionRequest(events));
    expect(ids(r.archivedEvents)).to.not.include(events[1]!.id);
    expect(r.archivedEvents.length).to.equal(plain.archivedEvents.length - 1);
    expect(ids(r.compactedEvents)).to.deep.equal([events[1]!.id, ...ids(plain.compactedEvents)]);
  });

  it('does not commit a result that keeps a tool result without its call', async function () {
    const events = agentRun(3);
    const splitting = {
      compact: async (request: CompactionRequest) =>
        new CompactionResult(
          request.events.filter((e) => e.id !== events[2]!.id),
          [events[2]!],
          10,
        ),
    };
    const r = await turnSafeStrategy(splitting, new Set(), silent, est).compact(compactionRequest(events));
    expect(r.archivedEvents).to.have.length(0);
    expect(ids(r.compactedEvents)).to.deep.equal(ids(events));
  });

  it('does not commit a summary that covers the turn input, and keeps the summariser usage on the no-op', async function () {
    const events = [...agentRun(2), U('and now?')];
    const input = events.at(-1)!;
    const summarising = {
      compact: async (request: CompactionRequest) => {
        const summary = event(Messages.assistant('summary'), {
          metadata: { synthetic: true, coveredEventIds: ids(request.events) },
        });
        return new CompactionResult([summary], [...request.events], 100).withUsage({
          summarizerCalls: 1,
        } as never);
      },
    };
    const r = await turnSafeStrategy(summarising, new Set([input.id]), silent, est).compact(compactionRequest(events));
    expect(r.archivedEvents).to.have.length(0);
    expect(r.usage).to.deep.include({ summarizerCalls: 1 });
  });

  it('is the configured strategy for everything else (name, settings, summariser)', function () {
    const inner = new TokenCountCompactionStrategy({ maxTokens: 400 });
    const safe = turnSafeStrategy(inner, new Set(), silent, est) as TokenCountCompactionStrategy;
    expect(safe.constructor.name).to.equal('TokenCountCompactionStrategy');
    expect(safe.maxTokens).to.equal(400);
  });
});
