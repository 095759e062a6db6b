import { expect } from 'chai';
import fc from 'fast-check';
import {
  AdditiveSummarizationCompactionStrategy,
  Messages,
  SlidingWindowCompactionStrategy,
  TokenCountCompactionStrategy,
  TurnWindowCompactionStrategy,
  type CompactionStrategy,
  type SessionEvent,
} from 'session-compaction';
import { toolCallStates } from 'session-compaction/spi';
import { A, CharEstimator, U, compactionRequest, event } from '../support/fixtures.js';
import { call, long, result, toolPairsIntact } from '../support/beyondEvents.js';
import { eventSpecsArb, propertyParams, toEvents } from '../support/arbitraries.js';
import { ScriptedChatClient, silentLogger } from '../summarization/support.js';

const est = new CharEstimator();
const MODES = ['agent-safe', 'tool-pair-safe', 'never'] as const;

/** Mechanical strategies with small limits, in every cut mode, so that they cut as much as they can. */
const strategyArb: fc.Arbitrary<CompactionStrategy> = fc.oneof(
  fc
    .tuple(fc.integer({ min: 1, max: 6 }), fc.constantFrom(...MODES))
    .map(
      ([maxEvents, cutWithinTurn]) => new SlidingWindowCompactionStrategy({ maxEvents, cutWithinTurn, tokenCountEstimator: est }),
    ),
  fc
    .tuple(fc.integer({ min: 1, max: 300 }), fc.constantFrom(...MODES))
    .map(
      ([maxTokens, cutWithinTurn]) => new TokenCountCompactionStrategy({ maxTokens, cutWithinTurn, tokenCountEstimator: est }),
    ),
  fc.integer({ min: 1, max: 3 }).map((maxTurns) => new TurnWindowCompactionStrategy({ maxTurns, tokenCountEstimator: est })),
);

/**
 * A window that ends in calls still waiting for their results: the last turn's assistant made `waiting`
 * calls (in one message or one per message), maybe next to a parallel call answered already.
 */
const waitingWindowArb = fc
  .record({
    before: eventSpecsArb(16),
    waiting: fc.integer({ min: 1, max: 3 }),
    split: fc.boolean(),
    answeredBeside: fc.boolean(),
    size: fc.integer({ min: 0, max: 400 }),
  })
  .map(({ before, waiting, split, answeredBeside, size }) => {
    const events = toEvents(before, 's');
    events.push(U(`the task ${long('', size)}`));
    const ids = Array.from({ length: waiting }, (_, i) => `wait-${i}`);
    if (split) for (const id of ids) events.push(call(id));
    else events.push(call(ids[0]!), ...ids.slice(1).map((id) => call(id)));
    if (answeredBeside) events.push(call('done-0'), result('done-0', long('out', size)));
    return { events, ids };
  });

describe('compaction and calls still waiting for their result', function () {
  it('property: no mechanical strategy, in any cut mode, archives a waiting call — its result, when it comes, has its call', async function () {
    await fc.assert(
      fc.asyncProperty(waitingWindowArb, strategyArb, async ({ events, ids }, strategy) => {
        const compacted = (await strategy.compact(compactionRequest(events))).compactedEvents;
        const kept = new Set(
          compacted.flatMap((e) => (e.message.type === 'assistant' ? (e.message.toolCalls ?? []) : [])).map((c) => c.id),
        );
        for (const id of ids) expect(kept.has(id), id).to.equal(true);
        // The results arrive: the window that follows holds every call with its result.
        const later: SessionEvent[] = [...compacted, ...ids.map((id) => result(id, 'arrived'))];
        expect(toolPairsIntact(later)).to.equal(true);
        for (const id of ids) expect(toolCallStates(later).get(id)).to.equal('answered');
      }),
      propertyParams(500),
    );
  });

  it('a waiting call stays with the parallel call its message answered, and that call with its result', async function () {
    const both = event(
      Messages.assistant(null, { toolCalls: [Messages.toolCall('wait', 'bash', '{}'), Messages.toolCall('p', 'bash', '{}')] }),
    );
    const events = [U('now'), both, result('p', long('b')), A('still working')];
    const strategy = new SlidingWindowCompactionStrategy({ maxEvents: 1, tokenCountEstimator: est });
    const compacted = (await strategy.compact(compactionRequest(events))).compactedEvents;
    expect(compacted.map((e) => e.id)).to.include.members([both.id, events[2]!.id]);
    expect(toolPairsIntact(compacted)).to.equal(true);
  });

  it('a call the user moved on from (abandoned) may be archived with its turn', async function () {
    const events = [U('first'), call('gone'), U('second'), call('x'), result('x', 'r'), U('third')];
    const compacted = (await new TurnWindowCompactionStrategy({ maxTurns: 1 }).compact(compactionRequest(events)))
      .compactedEvents;
    expect(compacted.map((e) => e.text)).to.deep.equal(['third']);
  });

  it('additive summarisation, even when the kept turns exceed maxKeptTokens, keeps the waiting call', async function () {
    const events = [U('first'), call('x'), result('x', long('r')), U('second'), call('wait', 'bash', long('args', 600))];
    const strategy = new AdditiveSummarizationCompactionStrategy({
      chatClient: new ScriptedChatClient(['summary']),
      keepTurns: 1,
      maxKeptTokens: 10,
      maxSummaryTokens: 100_000,
      tokenCountEstimator: est,
      logger: silentLogger,
    });
    const compacted = (await strategy.compact(compactionRequest(events))).compactedEvents;
    expect(compacted.some((e) => e.id === events[4]!.id)).to.equal(true);
  });
});
