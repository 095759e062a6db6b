import { expect } from 'chai';
import { CacheAwareTrigger, InvalidArgumentError, Messages } from 'session-compaction';
import type { CacheAwareTriggerOptions } from 'session-compaction/spi';
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

describe('CacheAwareTrigger: defaults and bounds', () => {
  const est = new CharEstimator();

  it('rejects missing options with InvalidArgumentError, not a TypeError', () => {
    for (const options of [null, undefined]) {
      expectThrows(
        () => new CacheAwareTrigger(options as unknown as CacheAwareTriggerOptions),
        InvalidArgumentError,
        'options must not be null',
      );
    }
  });

  it('without coldTokens it compacts only at maxTokens, however cold', async () => {
    const t = new CacheAwareTrigger({ maxTokens: 1000, now: () => at(60 * MINUTE), tokenCountEstimator: est });
    expect(t.coldTokens).to.equal(1000);
    expect(await t.shouldCompact(compactionRequest([...turn(0, 400), ...turn(0, 99)]))).to.equal(false);
    expect(await t.shouldCompact(compactionRequest([...turn(0, 400), ...turn(0, 100)]))).to.equal(true);
  });

  it('rejects a maxTokens that is not a positive integer, naming it', () => {
    expectThrows(() => new CacheAwareTrigger({ maxTokens: 0 }), InvalidArgumentError, 'maxTokens must be greater than 0');
  });

  it('coldTokens may equal maxTokens', () => {
    expect(new CacheAwareTrigger({ maxTokens: 500, coldTokens: 500 }).coldTokens).to.equal(500);
  });

  it('rejects a coldTokens or cacheTtlMs that is not a positive integer', () => {
    expectThrows(
      () => new CacheAwareTrigger({ maxTokens: 500, coldTokens: 0 }),
      InvalidArgumentError,
      'coldTokens must be greater than 0',
    );
    expectThrows(
      () => new CacheAwareTrigger({ maxTokens: 500, cacheTtlMs: 0 }),
      InvalidArgumentError,
      'cacheTtlMs must be greater than 0',
    );
  });

  it("assumes the providers' five-minute cache lifetime by default: a pause of exactly five minutes is still warm", () => {
    const reply = event(Messages.assistant('a'), { timestamp: at(0) });
    const after = (ms: number) => new CacheAwareTrigger({ maxTokens: 1000, now: () => at(ms) });
    expect(after(0).cacheTtlMs).to.equal(5 * MINUTE);
    expect(after(5 * MINUTE).isCacheCold(compactionRequest([reply]))).to.equal(false);
    expect(after(5 * MINUTE + 1).isCacheCold(compactionRequest([reply]))).to.equal(true);
  });

  it('rejects a clock that is not a function', () => {
    expectThrows(
      () => new CacheAwareTrigger({ maxTokens: 500, now: 5 as unknown as () => Date }),
      InvalidArgumentError,
      'now must be a function',
    );
  });

  it('reads the real clock by default: a reply an hour old left the cache cold, one just now did not', () => {
    const t = new CacheAwareTrigger({ maxTokens: 1000 });
    const old = event(Messages.assistant('a'), { timestamp: new Date(Date.now() - 60 * MINUTE) });
    const fresh = event(Messages.assistant('b'), { timestamp: new Date() });
    expect(t.isCacheCold(compactionRequest([old]))).to.equal(true);
    expect(t.isCacheCold(compactionRequest([old, fresh]))).to.equal(false);
  });

  it('measures from the newest reply, whatever the order of the window', () => {
    const newer = event(Messages.assistant('newer'), { timestamp: at(10 * MINUTE) });
    const older = event(Messages.assistant('older'), { timestamp: at(0) });
    expect(trigger(12 * MINUTE).idleSinceLastCall(compactionRequest([newer, older]))).to.equal(2 * MINUTE);
  });

  it('has no idle time to report for a window without a reply', () => {
    expect(trigger(0).idleSinceLastCall(compactionRequest([event(Messages.user('hi'), { timestamp: at(0) })]))).to.equal(null);
  });

  it('counts with the js-tiktoken estimator when none is given', async () => {
    const t = new CacheAwareTrigger({ maxTokens: 1, now: () => at(0) });
    expect(await t.shouldCompact(compactionRequest([event(Messages.user('hello'), { timestamp: at(0) })]))).to.equal(true);
  });
});
