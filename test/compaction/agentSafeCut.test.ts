import { expect } from 'chai';
import fc from 'fast-check';
import {
  CompactionRequest,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  Session,
  SlidingWindowCompactionStrategy,
  TokenCountCompactionStrategy,
  formatEvent,
  SessionEvent,
} from 'session-compaction';
import { agentSafeCut, stepStarts } from '../../src/compaction/cutWithinTurn.js';
import { A, CharEstimator, SYS, U, compactionRequest, event } from '../support/fixtures.js';
import { eventSequenceArb, propertyParams } from '../support/arbitraries.js';
import { skipWithReason } from '../support/services.js';
import { call, long, result, toolPairsIntact } from '../support/beyondEvents.js';
import { ScriptedChatClient, silentLogger } from '../summarization/support.js';
import { hasMiniSwe, miniSweSessions, recordedDataHint, toEvents } from '../support/recorded.js';

const est = new CharEstimator();
const ids = (events: readonly SessionEvent[]) => events.map((e) => e.id);
const cost = (events: readonly SessionEvent[]) => events.reduce((n, e) => n + formatEvent(e).length, 0);

/** One long agent turn: a task, then `steps` call/result pairs. */
function agentRun(steps: number, size = 200): SessionEvent[] {
  const events = [SYS('You are a coding agent.'), U('Fix the failing test.')];
  for (let i = 0; i < steps; i++)
    events.push(call(`c${i}`, 'bash', `{"command":"step ${i}"}`, `thought ${i}`), result(`c${i}`, long(`out ${i}`, size)));
  return events;
}

describe("cutWithinTurn: 'agent-safe' (the default)", function () {
  it('SlidingWindow keeps the task and the latest steps of one long agent turn instead of emptying the window', async function () {
    const events = agentRun(10);
    const r = await new SlidingWindowCompactionStrategy({ maxEvents: 6, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    expect(ids(r.compactedEvents)).to.deep.equal(ids([events[1]!, ...events.slice(-6)]));
    expect(ids(r.archivedEvents)).to.deep.equal(ids([events[0]!, ...events.slice(2, -6)]));
    expect(toolPairsIntact(r.compactedEvents)).to.equal(true);
  });

  it('SlidingWindow still cuts at a later turn start when there is one, without holding anything back', async function () {
    const events = [U('q1'), A('a1'), U('q2'), A('a2'), U('q3'), A('a3')];
    const r = await new SlidingWindowCompactionStrategy({ maxEvents: 3, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    expect(ids(r.compactedEvents)).to.deep.equal(ids(events.slice(4)));
  });

  it('TokenCount: when the newest event alone exceeds the budget, the latest step stays (cutWithinTurn never empties the window)', async function () {
    const events = [U('u1'), A('a1'), U('u2_longtxt'), A('a2')];
    const agentSafe = await new TokenCountCompactionStrategy({ maxTokens: 4, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    const never = await new TokenCountCompactionStrategy({
      maxTokens: 4,
      tokenCountEstimator: est,
      cutWithinTurn: 'never',
    }).compact(compactionRequest(events));
    expect(never.compactedEvents).to.deep.equal([]);
    expect(ids(agentSafe.compactedEvents)).to.deep.equal(ids(events.slice(3)));
  });

  it('TokenCount: the held-back task is paid for out of the budget', async function () {
    const events = agentRun(10, 100);
    const maxTokens = 1000;
    const r = await new TokenCountCompactionStrategy({ maxTokens, tokenCountEstimator: est }).compact(compactionRequest(events));
    expect(r.compactedEvents[0]!.id).to.equal(events[1]!.id);
    expect(cost(r.compactedEvents)).to.be.at.most(maxTokens);
    expect(toolPairsIntact(r.compactedEvents)).to.equal(true);
    expect(r.compactedEvents.at(-1)).to.equal(events.at(-1));
  });

  it('TokenCount: when the task and the latest step cannot both fit, the budget wins over the task', async function () {
    const events = [
      SYS('s'),
      U(long('task', 400)),
      call('c1', 'bash', '{}'),
      result('c1', 'ok'),
      call('c2', 'bash', '{}'),
      result('c2', 'ok'),
    ];
    const lastStep = events.slice(4);
    const r = await new TokenCountCompactionStrategy({ maxTokens: cost(lastStep) + 10, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    expect(ids(r.compactedEvents)).to.deep.equal(ids(lastStep));
  });

  it('TokenCount: a window under budget is left alone, preamble included', async function () {
    const events = [A('preamble'), U('u1'), A('a1')];
    const r = await new TokenCountCompactionStrategy({ maxTokens: 1000, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    expect(r.isNoop()).to.equal(true);
  });

  it('RecursiveSummarization keeps the task, then summarises the early steps and keeps the latest ones verbatim', async function () {
    const repo = new InMemorySessionRepository();
    const service = new DefaultSessionService(repo, { logger: silentLogger });
    const { id } = await service.create({ userId: 'u' });
    const task = await service.appendMessage(id, Messages.user('fix the failing test'));
    for (let step = 1; step <= 6; step++) {
      const c = Messages.toolCall(`call-${step}`, 'bash', `{"cmd":"step ${step}"}`);
      await service.appendMessage(id, Messages.assistant(`thinking ${step}`, { toolCalls: [c] }));
      await service.appendMessage(id, Messages.tool([Messages.toolResponse(`call-${step}`, 'bash', `output ${step}`)]));
    }
    const strategy = new RecursiveSummarizationCompactionStrategy({
      chatClient: new ScriptedChatClient(['summary of the early steps']),
      maxEventsToKeep: 4,
      overlapSize: 0,
      logger: silentLogger,
    });
    const r = await service.compact(id, () => true, strategy);
    expect(r.eventsRemoved).to.be.greaterThan(0);
    const active = await service.getEvents(id, EventFilter.active());
    expect(active.slice(0, 2).every((e) => e.isSynthetic())).to.equal(true);
    expect(active[2]!.id).to.equal(task.id);
    expect(toolPairsIntact(active)).to.equal(true);
    expect(active.at(-1)!.message.type).to.equal('tool');
  });

  it('agentSafeCut falls back to the last step start, and to no cut when there is none', function () {
    const events = [U('go'), call('c1'), result('c1', 'x'), call('c2'), result('c2', 'y')];
    expect(agentSafeCut(events, events.length)).to.equal(3);
    expect(agentSafeCut([U('only')], 1)).to.equal(0);
  });

  it('property: sliding window and token count never empty a non-empty window, never orphan a tool result, keep the task when they cut inside its turn', async function () {
    await fc.assert(
      fc.asyncProperty(
        eventSequenceArb(),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 400 }),
        async (events, maxEvents, maxTokens) => {
          const request = CompactionRequest.of(Session.create({ id: 'prop-session', userId: 'u' }), events);
          for (const strategy of [
            new SlidingWindowCompactionStrategy({ maxEvents, tokenCountEstimator: est }),
            new TokenCountCompactionStrategy({ maxTokens, tokenCountEstimator: est }),
          ]) {
            const r = await strategy.compact(request);
            const all = [...ids(r.archivedEvents), ...ids(r.compactedEvents)];
            expect([...all].sort(), 'archived ∪ kept = input').to.deep.equal([...ids(events)].sort());
            const real = events.filter((e) => !e.isSynthetic());
            const keptReal = r.compactedEvents.filter((e) => !e.isSynthetic());
            if (real.length > 0) expect(keptReal.length, 'never an empty window').to.be.greaterThan(0);
            if (toolPairsIntact(events)) expect(toolPairsIntact(r.compactedEvents), 'no orphaned tool result').to.equal(true);
            if (r.isNoop() || strategy instanceof TokenCountCompactionStrategy) continue;
            // Every kept event's turn keeps its opening user message.
            const kept = new Set(ids(keptReal));
            let opener: SessionEvent | null = null;
            for (const e of real) {
              if (e.messageType === 'user' && e.isRootEvent()) opener = e;
              else if (kept.has(e.id) && opener !== null) expect(kept.has(opener.id), `opener of ${e.id}`).to.equal(true);
            }
          }
        },
      ),
      propertyParams(),
    );
  });

  describe('on the mini-swe-agent recordings', function () {
    before(function () {
      if (!hasMiniSwe()) skipWithReason(this, `mini-swe-agent recordings not found (${recordedDataHint})`);
    });

    it('SlidingWindow and TokenCount keep the task, the latest step and every tool result with its call', async function () {
      const strategies = [
        new SlidingWindowCompactionStrategy({ maxEvents: 40 }),
        new TokenCountCompactionStrategy({ maxTokens: 8000 }),
      ];
      let checked = 0;
      for (const session of miniSweSessions()) {
        const events = toEvents(session);
        const task = events.find((e) => e.messageType === 'user')!;
        const lastStep = events.slice(stepStarts(events).at(-1)!);
        for (const strategy of strategies) {
          const r = await strategy.compact(compactionRequest(events));
          expect(toolPairsIntact(r.compactedEvents), session.sessionId).to.equal(true);
          expect(ids(r.compactedEvents.slice(-lastStep.length)), session.sessionId).to.deep.equal(ids(lastStep));
          if (!r.isNoop() && strategy instanceof SlidingWindowCompactionStrategy)
            expect(r.compactedEvents[0]!.id, session.sessionId).to.equal(task.id);
          checked++;
        }
      }
      expect(checked).to.equal(2 * miniSweSessions().length);
    });
  });
});

describe('cutWithinTurn: the fallback cut and pinned tool pairs', function () {
  const pinned = (e: SessionEvent) => event(e.message, { metadata: { [SessionEvent.METADATA_PINNED]: true } });
  const task = () => U('Fix the failing test.');

  it("the fallback cut never opens the window at a sub-agent's message: the root step it belongs to stays whole", async function () {
    const events = [
      task(),
      call('c0'),
      result('c0', 'out 0'),
      call('c1'),
      result('c1', 'out 1'),
      A('sub-agent says', 'orch.sub'),
    ];
    const r = await new SlidingWindowCompactionStrategy({ maxEvents: 1, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    expect(ids(r.compactedEvents)).to.deep.equal(ids([events[0]!, ...events.slice(3)]));
    expect(ids(r.archivedEvents)).to.deep.equal(ids(events.slice(1, 3)));
  });

  it('the fallback cut never opens the window at a system message: the latest tool step stays', async function () {
    const events = [task(), call('c0'), result('c0', 'out 0'), call('c1'), result('c1', 'out 1'), SYS('Reminder: be brief.')];
    const r = await new SlidingWindowCompactionStrategy({ maxEvents: 1, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    expect(ids(r.compactedEvents)).to.deep.equal(ids([events[0]!, ...events.slice(3)]));
  });

  it('a pinned tool call keeps its result in the window', async function () {
    const events = [U('q1'), pinned(call('p1')), result('p1', 'r'), A('a1'), U('q2'), A('a2'), U('q3'), A('a3')];
    const r = await new SlidingWindowCompactionStrategy({ maxEvents: 2, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    expect(ids(r.compactedEvents)).to.deep.equal(ids([events[1]!, events[2]!, events[6]!, events[7]!]));
  });

  it('a pinned tool result keeps its call in the window', async function () {
    const events = [U('q1'), call('p1'), pinned(result('p1', 'r')), A('a1'), U('q2'), A('a2'), U('q3'), A('a3')];
    const r = await new SlidingWindowCompactionStrategy({ maxEvents: 2, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    expect(ids(r.compactedEvents)).to.deep.equal(ids([events[1]!, events[2]!, events[6]!, events[7]!]));
  });

  it('the fallback cut never separates a call from its result, even at an assistant note between them', async function () {
    const events = [task(), call('c0'), result('c0', 'out 0'), call('c1'), A('still running'), result('c1', 'out 1')];
    const r = await new SlidingWindowCompactionStrategy({ maxEvents: 1, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    expect(ids(r.compactedEvents)).to.deep.equal(ids([events[0]!, ...events.slice(3)]));
    expect(toolPairsIntact(r.compactedEvents)).to.equal(true);
  });

  it('a pinned user message stays in the window', async function () {
    const events = [pinned(U('remember: staging only')), A('a1'), U('q2'), A('a2'), U('q3'), A('a3')];
    const r = await new SlidingWindowCompactionStrategy({ maxEvents: 2, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    expect(ids(r.compactedEvents)).to.deep.equal(ids([events[0]!, events[4]!, events[5]!]));
  });

  it('a pinned message without tool calls keeps only itself', async function () {
    const events = [U('q1'), call('p1'), result('p1', 'r'), pinned(A('a1')), U('q2'), A('a2'), U('q3'), A('a3')];
    const r = await new SlidingWindowCompactionStrategy({ maxEvents: 2, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    expect(ids(r.compactedEvents)).to.deep.equal(ids([events[3]!, events[6]!, events[7]!]));
  });
});
