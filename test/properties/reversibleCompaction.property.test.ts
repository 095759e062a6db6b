/**
 * Property: compact → revert restores the exact active window (ids, order, content), also with appends in
 * between and with two stacked compactions reverted newest first. Random logs, random strategies (window,
 * budget, masking, content policy, summarising, pipeline), random explicit ranges; on every backend.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import {
  AdditiveSummarizationCompactionStrategy,
  CompactionPipeline,
  ContentPolicyCompactionStrategy,
  DefaultSessionService,
  NativeCompactionStrategy,
  EventFilter,
  ObservationMaskingCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  SlidingWindowCompactionStrategy,
  TokenCountCompactionStrategy,
  TurnWindowCompactionStrategy,
  type CompactionRange,
  type CompactionStrategy,
  type NativeCompactor,
  type SessionEvent,
} from 'session-compaction';
import { eventSpecsArb, PROPERTY_SEED, toEvents } from '../support/arbitraries.js';
import { allBackends } from '../support/backends.js';
import { CharEstimator } from '../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../summarization/support.js';

const est = new CharEstimator();
const snapshot = (events: readonly SessionEvent[]) =>
  events.map((e) => ({ id: e.id, message: e.message, metadata: e.metadata, branch: e.branch, archived: e.archived }));

const strategies = (): CompactionStrategy[] => [
  new SlidingWindowCompactionStrategy({ maxEvents: 2, tokenCountEstimator: est }),
  new SlidingWindowCompactionStrategy({ maxEvents: 2, tokenCountEstimator: est, cutWithinTurn: 'never' }),
  new TokenCountCompactionStrategy({ maxTokens: 60, tokenCountEstimator: est }),
  new TurnWindowCompactionStrategy({ maxTurns: 1, tokenCountEstimator: est }),
  new ObservationMaskingCompactionStrategy({ maxChars: 80, tokenCountEstimator: est }),
  new ContentPolicyCompactionStrategy({ keepLast: { turns: 0 }, tokenCountEstimator: est }),
  new RecursiveSummarizationCompactionStrategy({
    chatClient: new ScriptedChatClient(['summary']),
    maxEventsToKeep: 2,
    overlapSize: 1,
    tokenCountEstimator: est,
    logger: silentLogger,
  }),
  new AdditiveSummarizationCompactionStrategy({
    chatClient: new ScriptedChatClient(['chunk summary']),
    keepTurns: 0,
    maxSummaryTokens: 40,
    tokenCountEstimator: est,
    logger: silentLogger,
  }),
  new CompactionPipeline({
    stages: [
      new ObservationMaskingCompactionStrategy({ maxChars: 80, tokenCountEstimator: est }),
      new RecursiveSummarizationCompactionStrategy({
        chatClient: new ScriptedChatClient(['summary']),
        maxEventsToKeep: 2,
        overlapSize: 0,
        tokenCountEstimator: est,
        logger: silentLogger,
      }),
    ],
    maxTokens: 50,
    tokenCountEstimator: est,
  }),
  new NativeCompactionStrategy({
    compactor,
    fallback: new RecursiveSummarizationCompactionStrategy({
      chatClient: new ScriptedChatClient(['summary']),
      maxEventsToKeep: 2,
      overlapSize: 0,
      tokenCountEstimator: est,
      logger: silentLogger,
    }),
    logger: silentLogger,
  }),
  new NativeCompactionStrategy({
    compactor,
    fallback: new AdditiveSummarizationCompactionStrategy({
      chatClient: new ScriptedChatClient(['chunk summary']),
      keepTurns: 0,
      maxSummaryTokens: 40,
      tokenCountEstimator: est,
      logger: silentLogger,
    }),
    portableSummary: 'provider',
    logger: silentLogger,
  }),
];

/** A provider's compaction, deterministic: an opaque item naming how many events it was sent. */
const compactor: NativeCompactor = {
  provider: 'property-provider',
  compact: async (input) => ({
    payload: [{ type: 'compaction', encrypted_content: `opaque:${input.events.length}` }],
    text: 'provider summary',
    usage: null,
  }),
};
const RUNS: Record<string, number> = { memory: 120, sqlite: 80, postgres: 25, redis: 25 };

interface Step {
  strategy: number;
  range: { from: number; to: number; toolPair: boolean } | undefined;
}

/** A compaction step: which strategy, and optionally a range picked by positions in the window. */
const stepArb: fc.Arbitrary<Step> = fc.record({
  strategy: fc.nat(10),
  range: fc.option(fc.record({ from: fc.nat(40), to: fc.nat(40), toolPair: fc.boolean() }), { nil: undefined }),
});

for (const backend of allBackends()) {
  describe(`property on ${backend.name}: compact → revert restores the exact active window`, function () {
    this.timeout(300_000);
    before(async function () {
      await backend.setup(this);
    });
    after(async () => backend.teardown());

    it('with appends in between and two stacked compactions reverted newest first', async function () {
      const service = new DefaultSessionService(backend.repository(), { logger: silentLogger, tokenCountEstimator: est });
      const active = (id: string) => service.getEvents(id, EventFilter.active());
      let reverted = 0;
      const compactStep = async (id: string, step: Step): Promise<boolean> => {
        const window = await active(id);
        let range: CompactionRange | undefined;
        if (step.range !== undefined && window.length > 0) {
          const a = step.range.from % window.length;
          const b = step.range.to % window.length;
          range = {
            fromEventId: window[Math.min(a, b)]!.id,
            toEventId: window[Math.max(a, b)]!.id,
            snap: step.range.toolPair ? 'tool-pair' : 'turn',
          };
        }
        const before = (await service.listCompactions(id)).length;
        await service.compact(id, () => true, strategies()[step.strategy]!, range === undefined ? {} : { range });
        return (await service.listCompactions(id)).length > before;
      };
      await fc.assert(
        fc.asyncProperty(
          eventSpecsArb(20),
          eventSpecsArb(4),
          eventSpecsArb(4),
          stepArb,
          stepArb,
          async (specs, batch1, batch2, first, second) => {
            const { id } = await service.create({ userId: 'prop' });
            for (const e of toEvents(specs, id, 'a')) await service.appendEvent(e);
            const original = await active(id);
            const firstRecorded = await compactStep(id, first);
            const appended1 = toEvents(batch1, id, 'b');
            for (const e of appended1) await service.appendEvent(e);
            const beforeSecond = await active(id);
            const secondRecorded = await compactStep(id, second);
            const appended2 = toEvents(batch2, id, 'c');
            for (const e of appended2) await service.appendEvent(e);
            const records = await service.listCompactions(id);
            if (secondRecorded) {
              await service.revertCompaction(id, records[0]!.id);
              reverted++;
              expect(snapshot(await active(id))).to.deep.equal(snapshot([...beforeSecond, ...appended2]));
            }
            if (firstRecorded) {
              await service.revertCompaction(id, records.at(-1)!.id);
              reverted++;
              expect(snapshot(await active(id))).to.deep.equal(snapshot([...original, ...appended1, ...appended2]));
            }
            // Reverting changes the window, never the archive of earlier history: nothing is archived any more.
            if (firstRecorded || secondRecorded)
              expect((await service.getEvents(id)).filter((e) => e.isArchived())).to.have.length(0);
          },
        ),
        { numRuns: RUNS[backend.name] ?? 25, seed: PROPERTY_SEED },
      );
      // The property must exercise reverts, not only no-op compactions.
      expect(reverted).to.be.greaterThan((RUNS[backend.name] ?? 25) / 2);
    });
  });
}
