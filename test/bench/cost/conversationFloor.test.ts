import { expect } from 'chai';
import { conversationFloors } from '../../../benchmarks/src/cost/conversationFloor.js';
import { PROVIDER_PRESETS } from 'session-compaction/spi';

const gpt41 = PROVIDER_PRESETS['openai-gpt-4.1']!;
const sonnet = PROVIDER_PRESETS['anthropic-claude-sonnet-4.5']!;

describe('bench: conversationFloors', () => {
  it('prices every message once uncached plus the replies, and adds the system re-reads at the cache-read price (hand-computed)', () => {
    const shape = { inputTokens: 10_000, outputTokens: 1_000, systemTokens: 1_250, calls: 13 };
    const [openai, anthropic] = conversationFloors(shape, [gpt41, sonnet]);
    // GPT-4.1: 10,000 × $2/M + 1,000 × $8/M = 0.028; 12 re-reads × 1,250 × $0.5/M = 0.0075.
    expect(openai!.preset).to.equal('openai-gpt-4.1');
    expect(openai!.sendOnce).to.be.closeTo(0.028, 1e-12);
    expect(openai!.withSystem).to.be.closeTo(0.0355, 1e-12);
    // Sonnet 4.5: 10,000 × $3/M + 1,000 × $15/M = 0.045; 12 × 1,250 × $0.3/M = 0.0045.
    expect(anthropic!.sendOnce).to.be.closeTo(0.045, 1e-12);
    expect(anthropic!.withSystem).to.be.closeTo(0.0495, 1e-12);
  });

  it('prices the whole history perfectly cached: each call writes what is new and re-reads the rest (hand-computed)', () => {
    const shape = { inputTokens: 3000, outputTokens: 100, systemTokens: 0, calls: 3, historyTokensAtCall: [1000, 2000, 3000] };
    const [openai, anthropic] = conversationFloors(shape, [gpt41, sonnet]);
    // GPT-4.1: 3,000 new × $2/M + (1,000 + 2,000) re-read × $0.5/M + 100 × $8/M = 0.006 + 0.0015 + 0.0008.
    expect(openai!.perfectCache).to.be.closeTo(0.0083, 1e-12);
    // Sonnet 4.5: 3,000 written × $3.75/M + 3,000 × $0.3/M + 100 × $15/M.
    expect(anthropic!.perfectCache).to.be.closeTo(0.01125 + 0.0009 + 0.0015, 1e-12);
    expect(conversationFloors({ ...shape, historyTokensAtCall: undefined }, [gpt41])[0]!.perfectCache).to.be.NaN;
  });

  it('adds nothing for a conversation without system messages or with a single call', () => {
    const [none] = conversationFloors({ inputTokens: 500, outputTokens: 50, systemTokens: 0, calls: 9 }, [gpt41]);
    const [single] = conversationFloors({ inputTokens: 500, outputTokens: 50, systemTokens: 200, calls: 1 }, [gpt41]);
    expect(none!.withSystem).to.equal(none!.sendOnce);
    expect(single!.withSystem).to.equal(single!.sendOnce);
  });

  it('re-reads at the input price when a preset has no cached-input price', () => {
    const custom = { ...gpt41, name: 'no-cache', prices: { inputPerMTok: 1, outputPerMTok: 2 } };
    const [floor] = conversationFloors({ inputTokens: 1_000, outputTokens: 0, systemTokens: 100, calls: 3 }, [custom]);
    expect(floor!.withSystem - floor!.sendOnce).to.be.closeTo((2 * 100 * 1) / 1e6, 1e-15);
  });
});
