import { expect } from 'chai';
import fc from 'fast-check';
import { addUsage, emptyUsage, priceUsage, usageCostNanos, type UsageRecord } from '../../src/tokens/UsageRecord.js';
import { PROVIDER_PRESETS } from 'session-compaction/spi';

const usage = (init: Partial<UsageRecord>): UsageRecord => ({ ...emptyUsage(), ...init });
const gpt41 = PROVIDER_PRESETS['openai-gpt-4.1']!.prices;
const sonnet = PROVIDER_PRESETS['anthropic-claude-sonnet-4.5']!.prices;

describe('UsageRecord', () => {
  it('bills uncached, cached and output tokens at their prices (hand-computed)', () => {
    // 348 uncached × $2 + 1,152 cached × $0.50 + 80 out × $8, per million = $0.001912.
    const nanos = usageCostNanos(usage({ inputTokens: 1500, cachedInputTokens: 1152, outputTokens: 80 }), gpt41);
    expect(nanos).to.equal(1_912_000);
  });

  it('bills cache writes at the write price, not as uncached input', () => {
    // 100 uncached × $3 + 1,000 written × $3.75 + 500 read × $0.30 = 300 + 3,750 + 150 (× 1,000 nanos).
    const nanos = usageCostNanos(
      usage({ inputTokens: 1600, cachedInputTokens: 500, cacheWriteTokens: 1000, outputTokens: 0 }),
      sonnet,
    );
    expect(nanos).to.equal(4_200_000);
  });

  it('bills the summariser at its own prices', () => {
    const mini = { inputPerMTok: 0.15, cachedInputPerMTok: 0.075, outputPerMTok: 0.6 };
    const u = usage({
      summarizerCalls: 1,
      summarizerInputTokens: 900,
      summarizerCachedInputTokens: 100,
      summarizerOutputTokens: 50,
    });
    // 800 × 150 + 100 × 75 + 50 × 600 nanos.
    expect(usageCostNanos(u, gpt41, mini)).to.equal(157_500);
    expect(priceUsage(u, gpt41, mini).estimatedCost).to.equal(0.0001575);
  });

  it('adds records field by field, and keeps a cost only when every priced part had one', () => {
    const a = usage({ inputTokens: 10, outputTokens: 1, estimatedCost: 0.1 });
    const b = usage({ inputTokens: 5, summarizerCalls: 2, estimatedCost: 0.2, estimatedCompactionCost: 0.15 });
    expect(addUsage(a, b)).to.deep.equal({
      ...usage({ inputTokens: 15, outputTokens: 1, summarizerCalls: 2 }),
      estimatedCost: 0.3,
      estimatedCompactionCost: 0.15,
    });
    expect(addUsage(a, usage({ inputTokens: 1 })).estimatedCost).to.equal(undefined);
    expect(addUsage(a, undefined, emptyUsage()).estimatedCost).to.equal(0.1);
  });

  it('prices the compaction part apart: the summariser fields at the summariser prices (hand-computed)', () => {
    const priced = priceUsage(
      usage({
        inputTokens: 1000,
        cachedInputTokens: 600,
        outputTokens: 100,
        summarizerInputTokens: 2000,
        summarizerOutputTokens: 300,
      }),
      { inputPerMTok: 2, cachedInputPerMTok: 0.5, outputPerMTok: 8 },
      { inputPerMTok: 0.4, outputPerMTok: 1.6 },
    );
    // Turn: 400 × 2 + 600 × 0.5 + 100 × 8 = 1,900 µ$; compaction: 2,000 × 0.4 + 300 × 1.6 = 1,280 µ$.
    expect(priced.estimatedCompactionCost).to.be.closeTo(0.00128, 1e-12);
    expect(priced.estimatedCost).to.be.closeTo(0.00318, 1e-12);
  });

  it('sums costs exactly however many turns (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ input: fc.nat(5000), cachedShare: fc.double({ min: 0, max: 1, noNaN: true }), output: fc.nat(500) }),
          {
            maxLength: 50,
          },
        ),
        (turns) => {
          let nanos = 0;
          let total: UsageRecord | undefined;
          for (const t of turns) {
            const u = priceUsage(
              usage({ inputTokens: t.input, cachedInputTokens: Math.floor(t.input * t.cachedShare), outputTokens: t.output }),
              gpt41,
            );
            nanos += usageCostNanos(u, gpt41);
            total = addUsage(total, u);
          }
          return turns.length === 0 || total!.estimatedCost === nanos / 1e9;
        },
      ),
    );
  });
});
