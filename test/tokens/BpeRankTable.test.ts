import { expect } from 'chai';
import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import o200k_base from 'js-tiktoken/ranks/o200k_base';
import cl100k_base from 'js-tiktoken/ranks/cl100k_base';
import p50k_base from 'js-tiktoken/ranks/p50k_base';
import { BpeRankTable, NO_RANK } from '../../src/tokens/BpeRankTable.js';
import { IllegalStateError } from '../../src/errors.js';
import { expectThrows } from '../support/fixtures.js';

describe('BpeRankTable', function () {
  for (const [name, bpe] of [
    ['o200k_base', o200k_base],
    ['cl100k_base', cl100k_base],
    ['p50k_base (ranks with a gap)', p50k_base],
  ] as const) {
    it(`finds every token of ${name} with js-tiktoken's rank, and its longest token length`, function () {
      const table = BpeRankTable.fromTiktoken(bpe);
      // js-tiktoken's own decoded table (rank → bytes) is the reference.
      const reference = (new Tiktoken(bpe) as unknown as { textMap: Map<number, Uint8Array> }).textMap;
      let longest = 0;
      for (const [rank, bytes] of reference) {
        longest = Math.max(longest, bytes.length);
        if (table.rank(bytes, 0, bytes.length) !== rank) {
          expect.fail(`rank of [${bytes.join(',')}]: ${table.rank(bytes, 0, bytes.length)}, expected ${rank}`);
        }
      }
      expect(reference.size).to.be.greaterThan(50_000);
      expect(table.maxTokenBytes).to.equal(longest);
    });
  }

  it('answers NO_RANK for byte sequences that are not tokens, short and long, and for a span of a larger array', function () {
    const table = BpeRankTable.fromTiktoken(o200k_base);
    const encoder = new TextEncoder();
    for (const text of ['qqqqqqab', 'zxq', 'xqzxqzxqzxqzxqz', 'a'.repeat(table.maxTokenBytes + 1)]) {
      const bytes = encoder.encode(text);
      expect(table.rank(bytes, 0, bytes.length), text).to.equal(NO_RANK);
    }
    const padded = encoder.encode('xx hello xx');
    const hello = encoder.encode(' hello');
    expect(table.rank(padded, 2, 8))
      .to.equal(table.rank(hello, 0, hello.length))
      .and.not.equal(NO_RANK);
  });

  it('rejects rank data it cannot read', function () {
    const broken = (bpe_ranks: string): TiktokenBPE => ({ pat_str: '\\S+', special_tokens: {}, bpe_ranks });
    expectThrows(() => BpeRankTable.fromTiktoken(broken('! x IQ==')), IllegalStateError, 'unreadable BPE rank data');
    expectThrows(() => BpeRankTable.fromTiktoken(broken('! 0 I*Q==')), IllegalStateError, 'unreadable BPE rank data');
    // Only one single-byte token: the counters need all 256.
    expectThrows(() => BpeRankTable.fromTiktoken(broken('! 0 IQ==')), IllegalStateError, 'has no token for the byte 0');
  });
});
