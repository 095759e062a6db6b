import { expect } from 'chai';
import {
  CompactionPipeline,
  InvalidArgumentError,
  Messages,
  ObservationMaskingCompactionStrategy,
  PressureBandCompactionStrategy,
  TokenCountCompactionStrategy,
  type SessionEvent,
} from 'session-compaction';
import { estimateEventsTokens, isRewriteOnly } from 'session-compaction/spi';
import { CharEstimator, U, compactionRequest, event, expectThrows } from '../../support/fixtures.js';
import { long } from '../../support/beyondEvents.js';

const est = new CharEstimator();
const MINUTE = 60_000;
const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(T0 + ms);

/** One agent step at time `ms`: a call, its result of `size` characters, and the reply that consumes it. */
function step(id: string, size: number, ms: number): SessionEvent[] {
  const timestamp = at(ms);
  return [
    event(Messages.assistant(null, { toolCalls: [Messages.toolCall(id, 'bash', '{}')] }), { timestamp }),
    event(Messages.tool([Messages.toolResponse(id, 'bash', long(id, size))]), { timestamp }),
    event(Messages.assistant(`read ${id}`), { timestamp }),
  ];
}

const masking = (minSavedTokens: number, nowMs: number) =>
  new ObservationMaskingCompactionStrategy({
    tokenCountEstimator: est,
    minSavedTokens,
    cacheTtlMs: 5 * MINUTE,
    now: () => at(nowMs),
  });

describe('cache-aware masking (minSavedTokens)', function () {
  it('holds back masking that saves fewer tokens than minSavedTokens while the cache is warm', async function () {
    const window = [U('go'), ...step('c1', 1000, 0)];
    const r = await masking(5000, MINUTE).compact(compactionRequest(window));
    expect(r.isNoop()).to.equal(true);
    expect(r.skipReason).to.equal('deferred');
    expect(r.compactedEvents).to.deep.equal(window);
  });

  it('masks many results at once when together they save at least minSavedTokens', async function () {
    const window = [U('go'), ...step('c1', 3000, 0), ...step('c2', 3000, 0)];
    const r = await masking(5000, MINUTE).compact(compactionRequest(window));
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([window[2]!.id, window[5]!.id]);
    expect(r.tokensEstimatedSaved).to.be.at.least(5000);
  });

  it('masks whatever there is once the last model call is older than the cache lifetime', async function () {
    const window = [U('go'), ...step('c1', 1000, 0)];
    expect((await masking(5000, 5 * MINUTE).compact(compactionRequest(window))).isNoop()).to.equal(true);
    const cold = await masking(5000, 5 * MINUTE + 1).compact(compactionRequest(window));
    expect(cold.archivedEvents.map((e) => e.id)).to.deep.equal([window[2]!.id]);
  });

  it('masks when the saving is exactly minSavedTokens', async function () {
    const window = [U('go'), ...step('c1', 1000, 0)];
    const saved = (await masking(0, MINUTE).compact(compactionRequest(window))).tokensEstimatedSaved;
    const r = await masking(saved, MINUTE).compact(compactionRequest(window));
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([window[2]!.id]);
    expect((await masking(saved + 1, MINUTE).compact(compactionRequest(window))).skipReason).to.equal('deferred');
  });

  it('without a clock of its own, reads the current time: a call of long ago means a cold cache', async function () {
    const window = [U('go'), ...step('c1', 1000, 0)];
    const r = await new ObservationMaskingCompactionStrategy({ tokenCountEstimator: est, minSavedTokens: 5000 }).compact(
      compactionRequest(window),
    );
    expect(r.archivedEvents).to.have.length(1);
  });

  it('with nothing to mask, says so rather than deferring', async function () {
    const window = [U('go'), event(Messages.assistant('no tools'), { timestamp: at(0) })];
    const r = await masking(5000, MINUTE).compact(compactionRequest(window));
    expect(r.isNoop()).to.equal(true);
    expect(r.skipReason).to.not.equal('deferred');
  });

  it('masks every consumed result at once by default (minSavedTokens 0)', async function () {
    const window = [U('go'), ...step('c1', 400, 0)];
    const r = await new ObservationMaskingCompactionStrategy({ tokenCountEstimator: est }).compact(compactionRequest(window));
    expect(r.archivedEvents).to.have.length(1);
  });

  it('refuses a negative or fractional minSavedTokens and a non-positive cacheTtlMs', function () {
    expectThrows(
      () => new ObservationMaskingCompactionStrategy({ minSavedTokens: -1 }),
      InvalidArgumentError,
      'minSavedTokens must be a non-negative integer',
    );
    expectThrows(
      () => new ObservationMaskingCompactionStrategy({ minSavedTokens: 1.5 }),
      InvalidArgumentError,
      'minSavedTokens must be a non-negative integer',
    );
    expectThrows(
      () => new ObservationMaskingCompactionStrategy({ minSavedTokens: 10, cacheTtlMs: 0 }),
      InvalidArgumentError,
      'cacheTtlMs must be greater than 0',
    );
    expectThrows(
      () => new ObservationMaskingCompactionStrategy({ minSavedTokens: 10, now: 5 as never }),
      InvalidArgumentError,
      'now must be a function',
    );
  });
});

describe('cache-aware pipelines (minSavedTokens on the whole run)', function () {
  const pipeline = (maxTokens: number, minSavedTokens: number) =>
    new CompactionPipeline({
      stages: [
        new ObservationMaskingCompactionStrategy({ tokenCountEstimator: est }),
        new TokenCountCompactionStrategy({ maxTokens, tokenCountEstimator: est }),
      ],
      maxTokens,
      minSavedTokens,
      cacheTtlMs: 5 * MINUTE,
      now: () => at(MINUTE),
      tokenCountEstimator: est,
    });

  it('defers a run that only masked a few tokens', async function () {
    const window = [U('go'), ...step('c1', 1000, 0), U('next')];
    // Just over maxTokens: masking alone brings the window under it, so the cut does not run.
    const r = await pipeline(estimateEventsTokens(window, est) - 1, 5000).compact(compactionRequest(window));
    expect(r.skipReason).to.equal('deferred');
    const warmless = await pipeline(estimateEventsTokens(window, est) - 1, 0).compact(compactionRequest(window));
    expect(isRewriteOnly(window, warmless.compactedEvents)).to.equal(true);
    expect(warmless.archivedEvents).to.have.length(1);
  });

  it('a deferred run does not fit: the window stays as it was, over budget', async function () {
    const window = [U('go'), ...step('c1', 1000, 0), U('next')];
    const maxTokens = estimateEventsTokens(window, est) - 1;
    const run = await pipeline(maxTokens, 5000).run(compactionRequest(window));
    expect(run.result.skipReason).to.equal('deferred');
    expect(run.fits).to.equal(false);
    expect((await pipeline(maxTokens, 0).run(compactionRequest(window))).fits).to.equal(true);
  });

  it('commits the masks with a cut, however little they save: the prefix changes anyway', async function () {
    // The last turn (the long question and c2's step) is what the cut keeps.
    const window = [U('first'), ...step('c1', 1000, 0), U('a'.repeat(600)), ...step('c2', 600, 0)];
    const r = await pipeline(1100, 5000).compact(compactionRequest(window));
    expect(r.isNoop()).to.equal(false);
    expect(isRewriteOnly(window, r.compactedEvents)).to.equal(false);
    expect(r.compactedEvents.length).to.be.lessThan(window.length);
    // c2's result (about 300 characters saved) was masked together with the cut.
    expect(r.archivedEvents.map((e) => e.id)).to.include(window[6]!.id);
    expect(r.compactedEvents.some((e) => e.metadata.maskedFrom === window[6]!.id)).to.equal(true);
  });

  it('pressure bands pass minSavedTokens to their pipeline: a small mask waits, a cold cache masks', async function () {
    const window = [U('go'), ...step('c1', 1000, 0)];
    const bands = (nowMs: number) =>
      new PressureBandCompactionStrategy({
        contextWindowTokens: 1300,
        tokenCountEstimator: est,
        minSavedTokens: 5000,
        cacheTtlMs: 5 * MINUTE,
        now: () => at(nowMs),
      });
    expect((await bands(MINUTE).compact(compactionRequest(window))).skipReason).to.equal('deferred');
    expect((await bands(10 * MINUTE).compact(compactionRequest(window))).archivedEvents).to.have.length(1);
  });
});

describe('isRewriteOnly', function () {
  it('is true for in-place masked copies and false for a cut', async function () {
    const window = [U('go'), ...step('c1', 1000, 0)];
    const masked = await new ObservationMaskingCompactionStrategy({ tokenCountEstimator: est }).compact(
      compactionRequest(window),
    );
    expect(isRewriteOnly(window, masked.compactedEvents)).to.equal(true);
    expect(isRewriteOnly(window, window.slice(1))).to.equal(false);
  });

  it('is false when an event is replaced by another one, or the window grows', function () {
    const window = [U('go'), ...step('c1', 100, 0)];
    expect(isRewriteOnly(window, window)).to.equal(true);
    expect(isRewriteOnly(window, [...window.slice(0, 3), U('other')])).to.equal(false);
    expect(isRewriteOnly(window, [...window, U('more')])).to.equal(false);
  });
});
