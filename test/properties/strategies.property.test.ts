/**
 * Invariants of the mechanical strategies over random sessions (root and branch events, tool pairs,
 * synthetic summary pairs), with random limits and the CHAR estimator.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import {
  CompactionRequest,
  Session,
  SlidingWindowCompactionStrategy,
  TokenCountCompactionStrategy,
  TurnWindowCompactionStrategy,
  formatEvent,
  type CompactionResult,
  type SessionEvent,
} from 'session-compaction';
import { eventSequenceArb, propertyParams } from '../support/arbitraries.js';
import { CharEstimator } from '../support/fixtures.js';

const session = Session.create({ id: 'prop-session', userId: 'prop-user' });
const ids = (events: readonly SessionEvent[]) => events.map((e) => e.id);
const isSynthetic = (e: SessionEvent) => e.metadata.synthetic === true;
/** An independent oracle for a turn start: root, non-synthetic user event. */
const startsTurn = (e: SessionEvent) => e.messageType === 'user' && e.branch === null && !isSynthetic(e);
const cost = (events: readonly SessionEvent[]) => events.reduce((n, e) => n + formatEvent(e).length, 0);

/** Checks shared by every mechanical strategy; returns the real input split around the result. */
function checkCommon(input: readonly SessionEvent[], result: CompactionResult) {
  const all = [...ids(result.archivedEvents), ...ids(result.compactedEvents)];
  expect(new Set(all).size, 'no event appears twice').to.equal(all.length);
  expect([...all].sort(), 'archived ∪ compacted = input').to.deep.equal([...ids(input)].sort());
  expect(result.archivedEvents.some(isSynthetic), 'synthetic events are never archived').to.equal(false);
  expect(result.tokensEstimatedSaved).to.equal(cost(result.archivedEvents));

  const synthetic = input.filter(isSynthetic);
  const real = input.filter((e) => !isSynthetic(e));
  if (result.archivedEvents.length === 0) {
    expect(ids(result.compactedEvents), 'a no-op returns the input unchanged').to.deep.equal(ids(input));
    return null;
  }
  const n = synthetic.length;
  expect(ids(result.compactedEvents.slice(0, n)), 'synthetic events first, in order').to.deep.equal(ids(synthetic));
  const keptReal = result.compactedEvents.slice(n);
  return { real, keptReal, synthetic };
}

/** Sliding and TokenCount cut real events once: archived is a prefix, kept the rest, starting a turn. */
function checkPrefixCut(input: readonly SessionEvent[], result: CompactionResult) {
  const split = checkCommon(input, result);
  if (split === null) return null;
  const { real, keptReal } = split;
  expect([...ids(result.archivedEvents), ...ids(keptReal)], 'archived is a prefix of the real events').to.deep.equal(ids(real));
  if (keptReal.length > 0) expect(startsTurn(keptReal[0]!), 'the kept window starts a turn').to.equal(true);
  return split;
}

const request = (events: readonly SessionEvent[]) => CompactionRequest.of(session, events);

describe('property: mechanical strategies partition the window at turn boundaries', function () {
  this.timeout(120_000);

  it('SlidingWindow: archived ∪ compacted = input, synthetic kept, window starts a turn, at most maxEvents root events kept', async function () {
    await fc.assert(
      fc.asyncProperty(eventSequenceArb(), fc.integer({ min: 1, max: 10 }), async (events, maxEvents) => {
        const strategy = new SlidingWindowCompactionStrategy({
          maxEvents,
          tokenCountEstimator: new CharEstimator(),
          cutWithinTurn: 'never',
        });
        const result = await strategy.compact(request(events));
        const rootReal = events.filter((e) => !isSynthetic(e) && e.branch === null).length;
        expect(result.archivedEvents.length > 0, 'compacts exactly when there are more root events than maxEvents').to.equal(
          rootReal > maxEvents,
        );
        const split = checkPrefixCut(events, result);
        if (split !== null) expect(split.keptReal.filter((e) => e.branch === null).length).to.be.at.most(maxEvents);
      }),
      propertyParams(),
    );
  });

  it('TokenCount: archived ∪ compacted = input, synthetic kept, window starts a turn and fits the budget left after synthetic events', async function () {
    await fc.assert(
      fc.asyncProperty(eventSequenceArb(), fc.integer({ min: 1, max: 600 }), async (events, maxTokens) => {
        const strategy = new TokenCountCompactionStrategy({
          maxTokens,
          tokenCountEstimator: new CharEstimator(),
          cutWithinTurn: 'never',
        });
        const result = await strategy.compact(request(events));
        const split = checkPrefixCut(events, result);
        const real = events.filter((e) => !isSynthetic(e));
        const remaining = maxTokens - cost(events.filter(isSynthetic));
        const fitsAndStartsTurn = real.length === 0 || (cost(real) <= remaining && startsTurn(real[0]!));
        expect(split === null, 'a no-op exactly when all real events fit and already start a turn').to.equal(fitsAndStartsTurn);
        if (split === null) return;
        if (split.keptReal.length > 0) expect(cost(split.keptReal)).to.be.at.most(remaining);
      }),
      propertyParams(),
    );
  });

  it('TurnWindow: archived ∪ compacted = input, synthetic kept, preamble kept, exactly maxTurns whole turns kept', async function () {
    await fc.assert(
      fc.asyncProperty(eventSequenceArb(), fc.integer({ min: 1, max: 5 }), async (events, maxTurns) => {
        const strategy = new TurnWindowCompactionStrategy({ maxTurns, tokenCountEstimator: new CharEstimator() });
        const result = await strategy.compact(request(events));
        const turns = events.filter(startsTurn).length;
        expect(result.archivedEvents.length > 0, 'compacts exactly when there are more than maxTurns turns').to.equal(
          turns > maxTurns,
        );
        const split = checkCommon(events, result);
        if (split === null) return;
        const { real, keptReal } = split;
        const firstTurn = real.findIndex(startsTurn);
        const preamble = real.slice(0, firstTurn);
        expect(ids(keptReal.slice(0, preamble.length)), 'the preamble is never archived').to.deep.equal(ids(preamble));
        const keptTurns = keptReal.slice(preamble.length);
        expect([...ids(preamble), ...ids(result.archivedEvents), ...ids(keptTurns)]).to.deep.equal(ids(real));
        expect(startsTurn(result.archivedEvents[0]!), 'whole turns are archived').to.equal(true);
        expect(startsTurn(keptTurns[0]!), 'after the preamble the window starts a turn').to.equal(true);
        expect(keptTurns.filter(startsTurn).length).to.equal(maxTurns);
      }),
      propertyParams(),
    );
  });
});
