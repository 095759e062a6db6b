import { expect } from 'chai';
import fc from 'fast-check';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k_base from 'js-tiktoken/ranks/o200k_base';
import cl100k_base from 'js-tiktoken/ranks/cl100k_base';
import p50k_base from 'js-tiktoken/ranks/p50k_base';
import { BpeRankTable } from '../../src/tokens/BpeRankTable.js';
import { BpeTokenCounter } from '../../src/tokens/BpeTokenCounter.js';
import { O200K_PATTERN } from '../../src/tokens/preTokenizers.js';
import { anyUnicode, anyUtf16, code, hostile, json, longRuns, prose, randomFrom } from './tokenStrings.js';

describe('BpeTokenCounter', function () {
  for (const [name, bpe] of [
    ['o200k_base', o200k_base],
    ['cl100k_base', cl100k_base],
  ] as const) {
    describe(`counts exactly as js-tiktoken's encode(text, [], []).length (${name})`, function () {
      const reference = new Tiktoken(bpe);
      const table = BpeRankTable.fromTiktoken(bpe);
      // One counter across all runs, so that its piece caches are warm and full of other pieces.
      const counter = new BpeTokenCounter(table, bpe.pat_str);
      const exact = (text: string): void => {
        expect(counter.count(text), JSON.stringify(text)).to.equal(reference.encode(text, [], []).length);
      };

      it('on prose-like text', function () {
        fc.assert(fc.property(prose, exact), { numRuns: 500 });
      });

      it('on code and tool-output-like text', function () {
        fc.assert(fc.property(code, exact), { numRuns: 500 });
      });

      it('on JSON', function () {
        fc.assert(fc.property(json, exact), { numRuns: 300 });
      });

      it('on strings of characters from every class the pattern distinguishes', function () {
        fc.assert(fc.property(hostile, exact), { numRuns: 1000 });
      });

      it('on arbitrary code points and arbitrary UTF-16 (unpaired surrogates count as U+FFFD)', function () {
        fc.assert(fc.property(anyUnicode, exact), { numRuns: 500 });
        fc.assert(fc.property(anyUtf16, exact), { numRuns: 500 });
      });

      it('on runs without whitespace up to 300 characters (the heap merge past 64 bytes)', function () {
        fc.assert(fc.property(longRuns, exact), { numRuns: 150 });
      });

      it('on long whitespace-free runs: 3,000 random letters, `qqqqqqab` × 400, 4,000 base64 characters', function () {
        this.timeout(120_000);
        exact(randomFrom('abcdefghijklmnopqrstuvwxyz', 3000, 42));
        exact('qqqqqqab'.repeat(400));
        exact(randomFrom('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', 4000, 3));
      });

      it('with the heap merge for every piece of 3 bytes or more', function () {
        const heapOnly = new BpeTokenCounter(table, bpe.pat_str, { heapMergeMinBytes: 3 });
        const sameAsReference = (text: string): void => {
          expect(heapOnly.count(text), JSON.stringify(text)).to.equal(reference.encode(text, [], []).length);
        };
        fc.assert(fc.property(fc.oneof(prose, code, hostile, longRuns), sameAsReference), { numRuns: 1000 });
      });

      it('with the pattern run as a regex when it has no scanner', function () {
        // The same pattern in a form the scanners do not recognise.
        const viaRegex = new BpeTokenCounter(table, `(?:${bpe.pat_str})`);
        const sameAsReference = (text: string): void => {
          expect(viaRegex.count(text), JSON.stringify(text)).to.equal(reference.encode(text, [], []).length);
        };
        fc.assert(fc.property(fc.oneof(prose, code, hostile), sameAsReference), { numRuns: 300 });
      });
    });
  }

  it('counts exactly as js-tiktoken with p50k_base (the scanner shared with r50k_base and gpt2)', function () {
    const reference = new Tiktoken(p50k_base);
    const counter = new BpeTokenCounter(BpeRankTable.fromTiktoken(p50k_base), p50k_base.pat_str);
    const exact = (text: string): void => {
      expect(counter.count(text), JSON.stringify(text)).to.equal(reference.encode(text, [], []).length);
    };
    fc.assert(fc.property(fc.oneof(prose, code, json, hostile, anyUnicode), exact), { numRuns: 500 });
  });

  it('gives the same count again once the piece is cached, and after the cache is cleared', function () {
    const counter = new BpeTokenCounter(BpeRankTable.fromTiktoken(o200k_base), O200K_PATTERN);
    const reference = new Tiktoken(o200k_base);
    const text = 'Unfamiliar compoundwords like tokenisation, dequeueing and HTTPServerConfig repeat: tokenisation.';
    const expected = reference.encode(text, [], []).length;
    expect(counter.count(text)).to.equal(expected);
    expect(counter.count(text)).to.equal(expected);
    counter.clearCache();
    expect(counter.count(text)).to.equal(expected);
  });

  it('counts 0 for the empty string', function () {
    expect(new BpeTokenCounter(BpeRankTable.fromTiktoken(o200k_base), O200K_PATTERN).count('')).to.equal(0);
  });
});
