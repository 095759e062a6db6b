import { expect } from 'chai';
import fc from 'fast-check';
import { PromptCacheSimulator, type PromptSegment } from '../../../benchmarks/src/cost/PromptCacheSimulator.js';
import { InvalidArgumentError } from 'session-compaction';
import { PROVIDER_PRESETS, type PromptCacheRules } from 'session-compaction/spi';

const MINUTE = 60_000;
const openai = PROVIDER_PRESETS['openai-gpt-4.1']!.cache;
const anthropic = PROVIDER_PRESETS['anthropic-claude-sonnet-4.5']!.cache;

/** Messages named by letter; the same letter is the same text. */
const keys = new Map<string, number>();
function seg(name: string, tokens: number, system = false): PromptSegment {
  if (!keys.has(name)) keys.set(name, keys.size);
  return { key: keys.get(name)!, tokens, ...(system ? { system } : {}) };
}

describe('bench: PromptCacheSimulator (automatic prefix caching, OpenAI rules)', () => {
  it('caches nothing below the 1,024-token minimum, even for an identical request', () => {
    const cache = new PromptCacheSimulator(openai);
    const request = [seg('A', 600), seg('B', 300)];
    expect(cache.send(request, 0)).to.deep.equal({ inputTokens: 900, cachedTokens: 0, cacheWriteTokens: 0 });
    expect(cache.send(request, 1000).cachedTokens).to.equal(0);
  });

  it('rounds a shared prefix down to 1,024 plus whole 128-token blocks', () => {
    const cache = new PromptCacheSimulator(openai);
    cache.send([seg('A', 1000), seg('B', 200)], 0);
    // Shared 1,200 tokens: 1,024 + floor(176 / 128) × 128 = 1,152.
    expect(cache.send([seg('A', 1000), seg('B', 200), seg('C', 100)], 1000)).to.deep.equal({
      inputTokens: 1300,
      cachedTokens: 1152,
      cacheWriteTokens: 0,
    });
  });

  it('reads a prefix reused exactly at the time to live, and nothing one millisecond later', () => {
    const first = new PromptCacheSimulator(openai);
    first.send([seg('A', 2000)], 0);
    expect(first.send([seg('A', 2000), seg('B', 10)], 5 * MINUTE).cachedTokens).to.equal(1920);
    const second = new PromptCacheSimulator(openai);
    second.send([seg('A', 2000)], 0);
    expect(second.send([seg('A', 2000), seg('B', 10)], 5 * MINUTE + 1).cachedTokens).to.equal(0);
  });

  it('refreshes a prefix on every hit, so a conversation with short pauses stays cached', () => {
    const cache = new PromptCacheSimulator(openai);
    cache.send([seg('A', 2000)], 0);
    cache.send([seg('A', 2000), seg('B', 10)], 4 * MINUTE);
    // 8 minutes after the first request but 4 after the last use; 2,010 shared → 1,024 + 7 × 128.
    expect(cache.send([seg('A', 2000), seg('B', 10), seg('C', 10)], 8 * MINUTE).cachedTokens).to.equal(1920);
  });

  it('misses entirely when the first message changes (a sliding window), however much follows unchanged', () => {
    const cache = new PromptCacheSimulator(openai);
    cache.send([seg('A', 100), seg('B', 3000), seg('C', 3000)], 0);
    expect(cache.send([seg('A2', 100), seg('B', 3000), seg('C', 3000)], 1000).cachedTokens).to.equal(0);
  });

  it('reads the shared prefix of an older request after a compaction rewrote the tail', () => {
    const cache = new PromptCacheSimulator(openai);
    cache.send([seg('S', 1500, true), seg('U1', 500), seg('A1', 500)], 0);
    // Summary replaces U1/A1: only the system prompt is shared. 1,500 → 1,024 + 3 × 128 = 1,408.
    expect(cache.send([seg('S', 1500, true), seg('SUM', 200), seg('U2', 50)], 1000).cachedTokens).to.equal(1408);
  });

  it('refuses requests sent back in time', () => {
    const cache = new PromptCacheSimulator(openai);
    cache.send([seg('A', 10)], 1000);
    expect(() => cache.send([seg('A', 10)], 999)).to.throw('requests must be sent in time order');
  });

  it('reads exactly the rounded longest prefix shared with an earlier live request (property)', () => {
    const rules: PromptCacheRules = { mode: 'automatic', minCacheableTokens: 50, incrementTokens: 16, ttlMs: 100 };
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ keys: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 8 }), gap: fc.integer({ min: 0, max: 150 }) }),
          {
            maxLength: 12,
          },
        ),
        (requests) => {
          const cache = new PromptCacheSimulator(rules);
          const sent: { keys: number[]; at: number }[] = [];
          let at = 0;
          for (const r of requests) {
            at += r.gap;
            const segments = r.keys.map((key) => ({ key, tokens: 10 + key }));
            const outcome = cache.send(segments, at);
            const best = Math.max(
              0,
              ...sent
                .filter((s) => at - s.at <= rules.ttlMs && s.keys.reduce((t, k) => t + 10 + k, 0) >= rules.minCacheableTokens)
                .map((s) => {
                  let shared = 0;
                  for (let i = 0; i < Math.min(s.keys.length, r.keys.length) && s.keys[i] === r.keys[i]; i++)
                    shared += 10 + r.keys[i]!;
                  return shared;
                }),
            );
            if (outcome.cachedTokens !== cache.cacheableLength(best) || outcome.cachedTokens > outcome.inputTokens) return false;
            sent.push({ keys: r.keys, at });
          }
          return true;
        },
      ),
    );
  });
});

describe('bench: PromptCacheSimulator (breakpoints, Anthropic rules)', () => {
  it('writes the whole first prompt to the cache, then reads it and writes only the new messages', () => {
    const cache = new PromptCacheSimulator(anthropic);
    expect(cache.send([seg('S', 1500, true), seg('U1', 100)], 0)).to.deep.equal({
      inputTokens: 1600,
      cachedTokens: 0,
      cacheWriteTokens: 1600,
    });
    expect(cache.send([seg('S', 1500, true), seg('U1', 100), seg('A1', 50), seg('U2', 100)], 1000)).to.deep.equal({
      inputTokens: 1750,
      cachedTokens: 1600,
      cacheWriteTokens: 150,
    });
  });

  it('neither reads nor writes a prompt shorter than the minimum', () => {
    const cache = new PromptCacheSimulator(anthropic);
    const request = [seg('S', 500, true), seg('U1', 400)];
    expect(cache.send(request, 0)).to.deep.equal({ inputTokens: 900, cachedTokens: 0, cacheWriteTokens: 0 });
    expect(cache.send(request, 10)).to.deep.equal({ inputTokens: 900, cachedTokens: 0, cacheWriteTokens: 0 });
  });

  it('reads the system breakpoint when the history after it changed (a sliding window keeps only that)', () => {
    const cache = new PromptCacheSimulator(anthropic);
    cache.send([seg('S', 1200, true), seg('U1', 300), seg('A1', 300)], 0);
    expect(cache.send([seg('S', 1200, true), seg('U2', 300), seg('A2', 300), seg('U3', 10)], 1000)).to.deep.equal({
      inputTokens: 1810,
      cachedTokens: 1200,
      cacheWriteTokens: 610,
    });
  });

  it('counts no hit at a message boundary that was never a breakpoint', () => {
    const cache = new PromptCacheSimulator(anthropic);
    cache.send([seg('U1', 2000), seg('A1', 10), seg('U2', 10)], 0);
    // Shares U1 and A1, but the only entry ended at U2: nothing is read, everything is written.
    expect(cache.send([seg('U1', 2000), seg('A1', 10), seg('X', 10)], 1000)).to.deep.equal({
      inputTokens: 2020,
      cachedTokens: 0,
      cacheWriteTokens: 2020,
    });
  });

  it('misses an entry more than 20 messages before the breakpoint', () => {
    const cache = new PromptCacheSimulator(anthropic);
    cache.send([seg('U1', 2000)], 0);
    const long = [seg('U1', 2000), ...Array.from({ length: 20 }, (_, i) => seg(`m${i}`, 5))];
    // The entry at message 0 is 20 messages back from the breakpoint at message 20: out of reach.
    expect(cache.send(long, 1000).cachedTokens).to.equal(0);
    const cache2 = new PromptCacheSimulator(anthropic);
    cache2.send([seg('U1', 2000)], 0);
    expect(cache2.send(long.slice(0, 20), 1000).cachedTokens).to.equal(2000);
  });

  it('with a breakpoint before a recall block, reads the history and bills the block uncached, never written', () => {
    const cache = new PromptCacheSimulator(anthropic);
    // S, U1, A1 | block B1, U2: the breakpoint on A1 (index 2).
    expect(
      cache.send([seg('S', 1500, true), seg('U1', 100), seg('A1', 100), seg('B1', 800), seg('U2', 20)], 0, [2]),
    ).to.deep.equal({ inputTokens: 2520, cachedTokens: 0, cacheWriteTokens: 1700 });
    // The next request drops B1 (rebuilt for U3): S..A1 is read, U2 and A2 written, B2 and U3 uncached.
    const next = [
      seg('S', 1500, true),
      seg('U1', 100),
      seg('A1', 100),
      seg('U2', 20),
      seg('A2', 30),
      seg('B2', 800),
      seg('U3', 20),
    ];
    expect(cache.send(next, 1000, [4])).to.deep.equal({ inputTokens: 2570, cachedTokens: 1700, cacheWriteTokens: 50 });
    // The same two requests with the breakpoint on the last message: the block is written and never read.
    const plain = new PromptCacheSimulator(anthropic);
    plain.send([seg('S', 1500, true), seg('U1', 100), seg('A1', 100), seg('B1', 800), seg('U2', 20)], 0);
    expect(plain.send(next, 1000)).to.deep.equal({ inputTokens: 2570, cachedTokens: 1500, cacheWriteTokens: 1070 });
  });

  it('refuses a breakpoint that is not a segment index', () => {
    const cache = new PromptCacheSimulator(anthropic);
    expect(() => cache.send([seg('U1', 10)], 0, [1])).to.throw(InvalidArgumentError, 'breakpoints must be indexes');
  });

  it('expires an entry after five minutes without use', () => {
    const cache = new PromptCacheSimulator(anthropic);
    cache.send([seg('U1', 2000)], 0);
    expect(cache.send([seg('U1', 2000), seg('U2', 5)], 5 * MINUTE + 1)).to.deep.equal({
      inputTokens: 2005,
      cachedTokens: 0,
      cacheWriteTokens: 2005,
    });
  });
});
