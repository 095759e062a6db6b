/**
 * Through DefaultSessionService + InMemorySessionRepository: random interleavings of appends and
 * compactions never lose or duplicate an event, and every compaction leaves the window at a turn boundary.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import {
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  SlidingWindowCompactionStrategy,
  TokenCountCompactionStrategy,
  TurnWindowCompactionStrategy,
  type CompactionStrategy,
  type SessionEvent,
} from 'session-compaction';
import {
  eventSpecsArb,
  mechanicalStrategySpecArb,
  propertyParams,
  toEvents,
  type EventSpec,
  type MechanicalStrategySpec,
} from '../support/arbitraries.js';
import { CharEstimator } from '../support/fixtures.js';

type Step = { op: 'append'; specs: EventSpec[] } | { op: 'compact'; strategy: MechanicalStrategySpec; fire: boolean };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('append' as const), specs: eventSpecsArb(12) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('compact' as const),
      strategy: mechanicalStrategySpecArb,
      fire: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    }),
  },
);

function strategyFor(spec: MechanicalStrategySpec): CompactionStrategy {
  const tokenCountEstimator = new CharEstimator();
  switch (spec.kind) {
    case 'sliding':
      // The turn-boundary invariant checked here is the 'never' cut's, an explicit option.
      return new SlidingWindowCompactionStrategy({ maxEvents: spec.maxEvents, tokenCountEstimator, cutWithinTurn: 'never' });
    case 'turnWindow':
      return new TurnWindowCompactionStrategy({ maxTurns: spec.maxTurns, tokenCountEstimator });
    case 'tokenCount':
      return new TokenCountCompactionStrategy({ maxTokens: spec.maxTokens, tokenCountEstimator, cutWithinTurn: 'never' });
  }
}

const ids = (events: readonly SessionEvent[]) => events.map((e) => e.id);
const isSynthetic = (e: SessionEvent) => e.metadata.synthetic === true;
const startsTurn = (e: SessionEvent) => e.messageType === 'user' && e.branch === null && !isSynthetic(e);
const silent = { error() {}, warn() {}, info() {}, debug() {} };

describe('property: appends and compactions through DefaultSessionService', function () {
  this.timeout(120_000);

  it('the full log keeps every appended event exactly once, and each compaction leaves the window at a turn boundary', async function () {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 10 }), async (steps) => {
        const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
        const { id } = await service.create({ userId: 'prop-user' });
        const appended: string[] = [];
        let archivedTotal = 0;

        for (const step of steps) {
          if (step.op === 'append') {
            for (const e of toEvents(step.specs, id, 'e-', appended.length)) {
              await service.appendEvent(e);
              appended.push(e.id);
            }
            continue;
          }
          const before = await service.getEvents(id, EventFilter.active());
          const result = await service.compact(id, () => step.fire, strategyFor(step.strategy));
          const after = await service.getEvents(id, EventFilter.active());
          if (!step.fire) expect(result.archivedEvents).to.deep.equal([]);
          if (result.archivedEvents.length === 0) {
            expect(ids(after), 'a no-op compaction writes nothing').to.deep.equal(ids(before));
            continue;
          }
          archivedTotal += result.archivedEvents.length;
          expect(ids(after), 'the active window is the committed compacted window').to.deep.equal(ids(result.compactedEvents));
          const synthetic = before.filter(isSynthetic);
          expect(ids(after.slice(0, synthetic.length)), 'summaries stay, first').to.deep.equal(ids(synthetic));
          let real = after.slice(synthetic.length);
          if (step.strategy.kind === 'turnWindow') {
            const beforeReal = before.filter((e) => !isSynthetic(e));
            const preamble = beforeReal.slice(0, beforeReal.findIndex(startsTurn));
            expect(ids(real.slice(0, preamble.length)), 'TurnWindow keeps the preamble').to.deep.equal(ids(preamble));
            real = real.slice(preamble.length);
            expect(real.length).to.be.greaterThan(0);
          }
          if (real.length > 0) expect(startsTurn(real[0]!), 'the window starts at a turn boundary').to.equal(true);
        }

        const all = await service.getEvents(id);
        expect(new Set(ids(all)).size, 'no event is stored twice').to.equal(all.length);
        expect([...ids(all)].sort(), 'every appended event is still in the log').to.deep.equal([...appended].sort());
        const active = new Set(ids(await service.getEvents(id, EventFilter.active())));
        for (const e of all) expect(e.isArchived(), `archived flag of ${e.id}`).to.equal(!active.has(e.id));
        expect(all.filter((e) => e.isArchived())).to.have.length(archivedTotal);
        expect(all.filter((e) => e.isArchived()).some(isSynthetic), 'synthetic events are never archived').to.equal(false);
      }),
      propertyParams(),
    );
  });
});
