import { expect } from 'chai';
import { ContextWindowTrigger, InvalidArgumentError, type TokenCountEstimator } from 'session-compaction';
import type { ContextWindowTriggerOptions } from 'session-compaction/spi';
import { CharEstimator, U, compactionRequest, expectThrows } from '../../support/fixtures.js';

const est = new CharEstimator();
/** One user event costing exactly `n` tokens with the character estimator ("User: " is 6). */
const sized = (n: number) => U('x'.repeat(n - 6));
const RATIO_MESSAGE = 'thresholdRatio must be greater than 0 and at most 1';
const windowOf = (options: Omit<ContextWindowTriggerOptions, 'contextWindowTokens'>) =>
  new ContextWindowTrigger({ contextWindowTokens: 1000, tokenCountEstimator: est, ...options });

describe('ContextWindowTrigger: options', function () {
  it('rejects missing options with InvalidArgumentError, not a TypeError', function () {
    for (const options of [null, undefined]) {
      expectThrows(
        () => new ContextWindowTrigger(options as unknown as ContextWindowTriggerOptions),
        InvalidArgumentError,
        'options must not be null',
      );
    }
  });

  it('a thresholdRatio of exactly 1 is allowed: the trigger fires when the input fills the whole budget', function () {
    const t = windowOf({ thresholdRatio: 1, reserveTokens: 100 });
    expect(t.thresholdTokens).to.equal(900);
    expect(t.shouldCompact(compactionRequest([sized(899)]))).to.equal(false);
    expect(t.shouldCompact(compactionRequest([sized(900)]))).to.equal(true);
  });

  it('a small positive thresholdRatio is allowed', function () {
    expect(windowOf({ thresholdRatio: 0.01 }).thresholdTokens).to.equal(10);
  });

  for (const [label, ratio] of [
    ['0', 0],
    ['a negative ratio', -0.5],
    ['a ratio just above 1', 1.000001],
    ['NaN', Number.NaN],
    ['a numeric string', '0.5'],
  ] as const) {
    it(`rejects thresholdRatio ${label}, saying the allowed range`, function () {
      expectThrows(() => windowOf({ thresholdRatio: ratio as number }), InvalidArgumentError, RATIO_MESSAGE);
    });
  }

  it('a floor, reserve, system prompt or tool schemas of 0 tokens are allowed', function () {
    const t = windowOf({ minTokens: 0, reserveTokens: 0, systemPromptTokens: 0, toolSchemaTokens: 0 });
    expect([t.minTokens, t.reserveTokens, t.systemPromptTokens, t.toolSchemaTokens]).to.deep.equal([0, 0, 0, 0]);
    expect(t.thresholdTokens).to.equal(700);
  });

  for (const name of ['minTokens', 'reserveTokens', 'systemPromptTokens', 'toolSchemaTokens'] as const) {
    it(`rejects a negative, fractional or non-numeric ${name}, naming it`, function () {
      for (const value of [-1, 1.5, '10']) {
        expectThrows(() => windowOf({ [name]: value as number }), InvalidArgumentError, `${name} must be a non-negative integer`);
      }
    });
  }

  it('rejects fixed costs that leave no room at all: reserve + system prompt + tool schemas equal to the window', function () {
    const message = 'reserveTokens + systemPromptTokens + toolSchemaTokens must be less than contextWindowTokens (1000)';
    expectThrows(() => windowOf({ toolSchemaTokens: 1000 }), InvalidArgumentError, message);
    expectThrows(() => windowOf({ systemPromptTokens: 1000 }), InvalidArgumentError, message);
    expectThrows(
      () => windowOf({ reserveTokens: 500, systemPromptTokens: 300, toolSchemaTokens: 200 }),
      InvalidArgumentError,
      message,
    );
    expect(windowOf({ reserveTokens: 500, systemPromptTokens: 300, toolSchemaTokens: 199 }).thresholdTokens).to.equal(350);
  });

  it('rejects a null estimator, and defaults to the js-tiktoken one when none is given', function () {
    expectThrows(
      () => windowOf({ tokenCountEstimator: null as unknown as TokenCountEstimator }),
      InvalidArgumentError,
      'tokenCountEstimator must not be null',
    );
    const t = new ContextWindowTrigger({ contextWindowTokens: 1000 });
    expect(t.tokenCountEstimator.estimate('hello world')).to.be.greaterThan(0);
  });

  it('an explicit contextWindowTokens wins over a model name', function () {
    expect(new ContextWindowTrigger({ contextWindowTokens: 5000, model: 'gpt-4o' }).contextWindowTokens).to.equal(5000);
  });

  it('rounds the threshold down to whole tokens', function () {
    // 0.7 × 999 = 699.3: an input of 699 tokens fires (the threshold is 699, not 699.3).
    const t = new ContextWindowTrigger({ contextWindowTokens: 999, tokenCountEstimator: est });
    expect(t.thresholdTokens).to.equal(699);
    expect(t.shouldCompact(compactionRequest([sized(699)]))).to.equal(true);
  });
});
