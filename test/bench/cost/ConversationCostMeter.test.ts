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

  it('gives the same text the same key and puts system messages first', () => {
    const coder = new PromptSegmentCoder(new CharacterTokenCountEstimator());
    const request = coder.request([Messages.user('hi'), Messages.system('rules'), Messages.user('hi')]);
    expect(request.map((s) => s.system === true)).to.deep.equal([true, false, false]);
    expect(request[1]!.key).to.equal(request[2]!.key);
    expect(request[0]!.key).to.not.equal(request[1]!.key);
  });
});
