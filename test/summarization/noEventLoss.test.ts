import { expect } from 'chai';
import fc from 'fast-check';
import {
  AdditiveSummarizationCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  SummarizationError,
  type CompactionStrategy,
  type SummaryFailureMode,
} from 'session-compaction';
import { A, CharEstimator, SA, SU, TC, TR, U, compactionRequest } from '../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from './support.js';

const eventArb = fc.constantFrom('U', 'A', 'TC', 'TR', 'Ub').map((kind) => {
  switch (kind) {
    case 'U':
      return U('question');
    case 'A':
      return A('answer');
    case 'TC':
      return TC();
    case 'TR':
      return TR();
    default:
      return U('sub-agent', 'b1');
  }
});
const answerArb = fc.constantFrom<string | null | Error>('a summary', null, '  ', new Error('down'));
const modeArb = fc.constantFrom<SummaryFailureMode>('skip', 'stub', 'throw');

describe('summarisation strategies never lose an event (property)', function () {
  it('every real event is either kept or archived, never both; synthetic events are never archived', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArb, { maxLength: 25 }),
        fc.boolean(),
        answerArb,
        modeArb,
        fc.integer({ min: 1, max: 6 }),
        fc.boolean(),
        async (realEvents, withPrior, answer, failureMode, size, useAdditive) => {
          const events = withPrior ? [SU(), SA('prior'), ...realEvents] : realEvents;
          const chatClient = new ScriptedChatClient([answer]);
          const common = { chatClient, failureMode, tokenCountEstimator: new CharEstimator(), logger: silentLogger };
          const strategy: CompactionStrategy = useAdditive
            ? new AdditiveSummarizationCompactionStrategy({ ...common, keepTurns: size - 1, maxSummaryTokens: 10_000 })
            : new RecursiveSummarizationCompactionStrategy({ ...common, maxEventsToKeep: size, overlapSize: size - 1 });
          let result;
          try {
            result = await strategy.compact(compactionRequest(events));
          } catch (error) {
            // Only 'throw' mode may reject, only for a failed summary, and then nothing was written.
            expect(failureMode).to.equal('throw');
            expect(error).to.be.instanceOf(SummarizationError);
            return;
          }
          const kept = new Set(result.compactedEvents.map((e) => e.id));
          const archived = new Set(result.archivedEvents.map((e) => e.id));
          for (const e of realEvents) expect(kept.has(e.id) !== archived.has(e.id), e.id).to.equal(true);
          for (const e of result.archivedEvents) expect(e.isSynthetic()).to.equal(false);
          if (archived.size > 0) expect(result.compactedEvents.filter((e) => e.isSynthetic()).length).to.be.greaterThan(0);
          if (archived.size === 0) expect(result.compactedEvents.map((e) => e.id)).to.deep.equal(events.map((e) => e.id));
        },
      ),
      { numRuns: 300 },
    );
  });
});
