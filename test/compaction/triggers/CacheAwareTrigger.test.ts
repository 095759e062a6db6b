import { expect } from 'chai';
import { CacheAwareTrigger, InvalidArgumentError, Messages } from 'session-compaction';
import { CharEstimator, compactionRequest, event, expectThrows } from '../../support/fixtures.js';

const T0 = Date.parse('2025-01-01T12:00:00Z');
const MINUTE = 60_000;
const at = (ms: number) => new Date(T0 + ms);
/** A user message and its reply at `ms`, each `size` characters (tokens, with the CHAR estimator). */
const turn = (ms: number, size: number) => [
  event(Messages.user('u'.repeat(size - 'User: '.length)), { timestamp: at(ms) }),
  event(Messages.assistant('a'.repeat(size - 'Assistant: '.length)), { timestamp: at(ms) }),
];
const trigger = (nowMs: number) =>
  new CacheAwareTrigger({
    maxTokens: 1000,
    coldTokens: 500,
    cacheTtlMs: 5 * MINUTE,
    now: () => at(nowMs),
    tokenCountEstimator: new CharEstimator(),
  });

describe('CacheAwareTrigger', () => {
  it('defers compaction between coldTokens and maxTokens while the prefix is probably cached', async () => {
    const window = [...turn(0, 300), ...turn(MINUTE, 100)]; // 800 tokens, last call 4 minutes ago
    expect(await trigger(5 * MINUTE).shouldCompact(compactionRequest(window))).to.equal(false);
  });

  it('compacts at coldTokens once the pause outlasted the cache lifetime', async () => {
    const window = [...turn(0, 300), ...turn(MINUTE, 100)];
    expect(await trigger(6 * MINUTE + 1).shouldCompact(compactionRequest(window))).to.equal(true);
  });

  it('compacts at maxTokens even while the cache is warm: the window is about to overflow', async () => {
    const window = [...turn(0, 400), ...turn(MINUTE, 100)]; // 1,000 tokens
    expect(await trigger(MINUTE).shouldCompact(compactionRequest(window))).to.equal(true);
  });

  it('never compacts below coldTokens, however cold', async () => {
    expect(await trigger(60 * MINUTE).shouldCompact(compactionRequest(turn(0, 200)))).to.equal(false);
  });

  it('measures the pause from the last reply, not from the user message that just arrived', () => {
    const window = [...turn(0, 100), event(Messages.user('back after lunch'), { timestamp: at(50 * MINUTE) })];
    expect(trigger(50 * MINUTE).idleSinceLastCall(compactionRequest(window))).to.equal(50 * MINUTE);
  });

  it('treats a window without a reply as cold: nothing was cached yet', () => {
    const window = [event(Messages.user('imported history'), { timestamp: at(0) })];
    expect(trigger(0).isCacheCold(compactionRequest(window))).to.equal(true);
  });

  it('ignores summaries when looking for the last reply', () => {
    const summary = event(Messages.assistant('summary'), { timestamp: at(10 * MINUTE), metadata: { synthetic: true } });
    expect(trigger(11 * MINUTE).isCacheCold(compactionRequest([...turn(0, 100), summary]))).to.equal(true);
  });

  it('rejects coldTokens above maxTokens', () => {
    expectThrows(
      () => new CacheAwareTrigger({ maxTokens: 100, coldTokens: 200 }),
      InvalidArgumentError,
      'coldTokens must not exceed maxTokens',
    );
  });
});
