import { expect } from 'chai';
import {
  CompactionRequest,
  InvalidArgumentError,
  Session,
  TokenGrowthTrigger,
  type TokenCountEstimator,
} from 'session-compaction';
import { METADATA_TOKEN_CALIBRATION, type TokenGrowthTriggerOptions } from 'session-compaction/spi';
import { CharEstimator, SA, U, compactionRequest, expectThrows } from '../../support/fixtures.js';

const est = new CharEstimator();
/** One user event costing exactly `n` tokens with the character estimator ("User: " is 6). */
const sized = (n: number) => U('x'.repeat(n - 6));
const requestFor = (sessionId: string, events: Parameters<typeof compactionRequest>[0]) =>
  CompactionRequest.of(Session.create({ id: sessionId, userId: 'u' }), events);

describe('TokenGrowthTrigger: anchors and options', function () {
  it('rejects missing options with InvalidArgumentError, not a TypeError', function () {
    for (const options of [null, undefined]) {
      expectThrows(
        () => new TokenGrowthTrigger(options as unknown as TokenGrowthTriggerOptions),
        InvalidArgumentError,
        'options must not be null',
      );
    }
  });

  it('rejects a null estimator, and defaults to the js-tiktoken one when none is given', function () {
    expectThrows(
      () => new TokenGrowthTrigger({ tokens: 10, tokenCountEstimator: null as unknown as TokenCountEstimator }),
      InvalidArgumentError,
      'tokenCountEstimator must not be null',
    );
    const t = new TokenGrowthTrigger({ tokens: 1 });
    expect(t.tokenCountEstimator.estimate('hello world')).to.be.greaterThan(0);
    expect(t.shouldCompact(compactionRequest([U('hello')]))).to.equal(true);
  });

  it('tracks 10,000 sessions by default', function () {
    expect(TokenGrowthTrigger.DEFAULT_MAX_TRACKED_SESSIONS).to.equal(10_000);
  });

  it("scales the growth by the session's calibration ratio", function () {
    const t = new TokenGrowthTrigger({ tokens: 100, tokenCountEstimator: est });
    const session = Session.create({
      id: 'calibrated',
      userId: 'u',
      metadata: { [METADATA_TOKEN_CALIBRATION]: { ratio: 2, samples: 5 } },
    });
    const request = CompactionRequest.of(session, [sized(60)]);
    expect(t.growth(request)).to.equal(120);
    expect(t.shouldCompact(request)).to.equal(true);
  });

  it('counts everything after a summary that opens the window', function () {
    const t = new TokenGrowthTrigger({ tokens: 100, tokenCountEstimator: est });
    expect(t.growth(compactionRequest([SA('summary of before'), sized(50)]))).to.equal(50);
  });

  it('an anchor that was archived falls back to the newest summary', function () {
    const t = new TokenGrowthTrigger({ tokens: 100, tokenCountEstimator: est });
    expect(t.shouldCompact(compactionRequest([sized(150)]))).to.equal(true);
    // The compaction archived the anchor and left a summary: only what follows it counts.
    expect(t.growth(compactionRequest([sized(70), SA('summary'), sized(30)]))).to.equal(30);
  });

  it('an anchor that opens the window counts everything after it', function () {
    const t = new TokenGrowthTrigger({ tokens: 100, tokenCountEstimator: est });
    const anchor = sized(150);
    expect(t.shouldCompact(compactionRequest([anchor]))).to.equal(true);
    expect(t.growth(compactionRequest([anchor, sized(40)]))).to.equal(40);
  });

  it('does not fire, and so moves no anchor, while the growth stays below the cadence', function () {
    const t = new TokenGrowthTrigger({ tokens: 100, tokenCountEstimator: est });
    const first = sized(100);
    expect(t.shouldCompact(compactionRequest([first]))).to.equal(true);
    const second = sized(60);
    expect(t.shouldCompact(compactionRequest([first, second]))).to.equal(false);
    // Had the quiet evaluation moved the anchor to `second`, 40 more tokens would not be enough.
    expect(t.shouldCompact(compactionRequest([first, second, sized(40)]))).to.equal(true);
  });

  it('keeps one anchor per session', function () {
    const t = new TokenGrowthTrigger({ tokens: 100, tokenCountEstimator: est });
    const a = sized(100);
    expect(t.shouldCompact(requestFor('a', [a]))).to.equal(true);
    const b = [sized(50)];
    expect(t.growth(requestFor('b', b))).to.equal(50);
    expect(t.growth(requestFor('a', [a, sized(30)]))).to.equal(30);
  });

  it('reset forgets the anchor of a session: its whole window counts again', function () {
    const t = new TokenGrowthTrigger({ tokens: 100, tokenCountEstimator: est });
    const anchor = sized(100);
    expect(t.shouldCompact(requestFor('a', [anchor]))).to.equal(true);
    t.reset('a');
    expect(t.growth(requestFor('a', [anchor, sized(30)]))).to.equal(130);
  });

  it('beyond maxTrackedSessions it forgets the session that fired least recently', function () {
    const t = new TokenGrowthTrigger({ tokens: 100, tokenCountEstimator: est, maxTrackedSessions: 2 });
    const anchors = { a: sized(100), b: sized(100), c: sized(100) };
    expect(t.shouldCompact(requestFor('a', [anchors.a]))).to.equal(true);
    expect(t.shouldCompact(requestFor('b', [anchors.b]))).to.equal(true);
    // 'a' fires again: now 'b' is the least recently fired.
    const a2 = sized(100);
    expect(t.shouldCompact(requestFor('a', [anchors.a, a2]))).to.equal(true);
    expect(t.shouldCompact(requestFor('c', [anchors.c]))).to.equal(true);
    expect(t.growth(requestFor('b', [anchors.b, sized(10)]))).to.equal(110);
    expect(t.growth(requestFor('a', [anchors.a, a2, sized(10)]))).to.equal(10);
    expect(t.growth(requestFor('c', [anchors.c, sized(10)]))).to.equal(10);
  });
});
