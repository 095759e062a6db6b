import { expect } from 'chai';
import { ConversationCostMeter, PromptSegmentCoder } from '../../../benchmarks/src/cost/ConversationCostMeter.js';
import { Messages } from 'session-compaction';
import { PROVIDER_PRESETS, CharacterTokenCountEstimator } from 'session-compaction/spi';

const gpt41 = PROVIDER_PRESETS['openai-gpt-4.1']!;
const sonnet = PROVIDER_PRESETS['anthropic-claude-sonnet-4.5']!;

describe('bench: ConversationCostMeter', () => {
  it('bills uncached, cached and output tokens at the preset prices (hand-computed, OpenAI)', () => {
    const meter = new ConversationCostMeter([gpt41]);
    const a = { key: 0, tokens: 2000 };
    meter.call([a], 0, 100);
    meter.call([a, { key: 1, tokens: 300 }], 1000, 50);
    // Call 1: 2,000 uncached × $2/M + 100 out × $8/M = 0.004 + 0.0008.
    // Call 2: 1,920 cached × $0.5/M + 380 uncached × $2/M + 50 out × $8/M = 0.00096 + 0.00076 + 0.0004.
    const [tally] = meter.tallies;
    expect(tally!.cachedTokens).to.equal(1920);
    expect(tally!.cost).to.be.closeTo(0.0048 + 0.00212, 1e-12);
    expect(tally!.costWithoutCache).to.be.closeTo(0.0048 + 2300 * 2e-6 + 0.0004, 1e-12);
  });

  it('bills cache writes at the write price and the summariser uncached (hand-computed, Anthropic)', () => {
    const meter = new ConversationCostMeter([sonnet]);
    meter.call(
      [
        { key: 0, tokens: 1500, system: true },
        { key: 1, tokens: 100 },
      ],
      0,
      0,
    );
    meter.summarizer(1000, 200);
    // 1,600 written × $3.75/M = 0.006; summariser 1,000 × $3/M + 200 × $15/M = 0.006.
    expect(meter.tallies[0]!.cacheWriteTokens).to.equal(1600);
    expect(meter.tallies[0]!.cost).to.be.closeTo(0.012, 1e-12);
  });

  it('prices perfect caching per message: written once, re-read on every later call wherever it stands (hand-computed)', () => {
    const meter = new ConversationCostMeter([gpt41, sonnet]);
    const a = { key: 0, tokens: 2000 };
    const b = { key: 1, tokens: 300 };
    const masked = { key: 2, tokens: 50 };
    meter.call([a, b], 0, 100);
    // A rewrite of b (masking) misses the real cache from there on, but the perfect cache still holds a.
    meter.call([a, masked, { key: 3, tokens: 10 }], 1000, 0);
    const [openai, anthropic] = meter.tallies;
    // GPT-4.1: 2,300 × $2/M + 100 × $8/M; then 2,000 × $0.5/M + 60 × $2/M.
    expect(openai!.costPerfectCache).to.be.closeTo(0.0046 + 0.0008 + 0.001 + 0.00012, 1e-12);
    // Sonnet 4.5: written at $3.75/M, read at $0.3/M, output $15/M.
    expect(anthropic!.costPerfectCache).to.be.closeTo(2300 * 3.75e-6 + 100 * 15e-6 + 2000 * 0.3e-6 + 60 * 3.75e-6, 1e-12);
  });

  it('keeps what compactions cost apart, and adds it to every total', () => {
    const meter = new ConversationCostMeter([gpt41]);
    meter.call([{ key: 0, tokens: 100 }], 0, 0);
    const before = { ...meter.tallies[0]! };
    meter.summarizer(1000, 200);
    // 1,000 × $2/M + 200 × $8/M = 0.0036.
    const after = meter.tallies[0]!;
    expect(after.compactionCost).to.be.closeTo(0.0036, 1e-12);
    expect(after.cost - before.cost).to.be.closeTo(0.0036, 1e-12);
    expect(after.costWithoutCache - before.costWithoutCache).to.be.closeTo(0.0036, 1e-12);
    expect(after.costPerfectCache - before.costPerfectCache).to.be.closeTo(0.0036, 1e-12);
  });

  it('gives the same text the same key and puts system messages first', () => {
    const coder = new PromptSegmentCoder(new CharacterTokenCountEstimator());
    const request = coder.request([Messages.user('hi'), Messages.system('rules'), Messages.user('hi')]);
    expect(request.map((s) => s.system === true)).to.deep.equal([true, false, false]);
    expect(request[1]!.key).to.equal(request[2]!.key);
    expect(request[0]!.key).to.not.equal(request[1]!.key);
  });
});
