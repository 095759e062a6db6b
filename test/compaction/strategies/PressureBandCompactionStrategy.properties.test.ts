import { expect } from 'chai';
import fc from 'fast-check';
import { PressureBandCompactionStrategy } from 'session-compaction';
import { DEFAULT_PRESSURE_THRESHOLDS, estimateEventsTokens } from 'session-compaction/spi';
import { eventSequenceArb, propertyParams } from '../../support/arbitraries.js';
import { CharEstimator, compactionRequest } from '../../support/fixtures.js';
import { toolPairsIntact } from '../../support/beyondEvents.js';

const est = new CharEstimator();

describe('PressureBandCompactionStrategy (property tests)', function () {
  this.timeout(60_000);

  it('over random logs and windows: a band runs iff the pressure reaches the first band, in order, each at or above its threshold; only truncation ends above 99 %; no pair broken, no empty window', async function () {
    await fc.assert(
      fc.asyncProperty(
        eventSequenceArb({ maxLength: 40 }),
        fc.double({ min: 0.3, max: 1.6, noNaN: true }),
        async (events, pressure) => {
          const tokens = estimateEventsTokens(events, est);
          fc.pre(tokens > 20);
          const contextWindowTokens = Math.max(1, Math.round(tokens / pressure));
          const strategy = new PressureBandCompactionStrategy({ contextWindowTokens, tokenCountEstimator: est });
          const request = compactionRequest(events);
          const run = await strategy.run(request);
          const names = strategy.bands.map((b) => b.name);
          const ran = run.stages.map((s) => s.name);
          // In band order, each at most once.
          expect(ran).to.deep.equal(names.filter((n) => ran.includes(n)));
          for (const stage of run.stages) {
            const band = strategy.bands.find((b) => b.name === stage.name)!;
            expect(stage.tokensBefore).to.be.at.least(Math.ceil(band.threshold * contextWindowTokens) - 1);
          }
          const before = strategy.pressureOf(request);
          const after = strategy.pressureOf(request.withEvents(run.result.compactedEvents));
          // A band runs exactly when the pressure reaches the first band; only truncation may leave it above 99 %.
          expect(ran.length > 0).to.equal(before >= DEFAULT_PRESSURE_THRESHOLDS.mask);
          if (!ran.includes('truncate')) expect(after).to.be.below(DEFAULT_PRESSURE_THRESHOLDS.truncate);
          // Nothing invented, no tool pair broken, never an empty window when there was a real event.
          const ids = new Set(events.map((e) => e.id));
          for (const e of run.result.archivedEvents) expect(ids.has(e.id)).to.equal(true);
          if (toolPairsIntact(events)) expect(toolPairsIntact(run.result.compactedEvents)).to.equal(true);
          if (events.some((e) => !e.isSynthetic())) expect(run.result.compactedEvents.length).to.be.greaterThan(0);
        },
      ),
      propertyParams(150),
    );
  });
});
