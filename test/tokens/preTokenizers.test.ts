import { expect } from 'chai';
import fc from 'fast-check';
import { createRequire } from 'node:module';
import type { TiktokenBPE } from 'js-tiktoken/lite';
import { anyUnicode, anyUtf16, hostile } from './tokenStrings.js';
import {
  CL100K_PATTERN,
  O200K_PATTERN,
  R50K_PATTERN,
  type PreTokenizer,
  preTokenizerFor,
} from '../../src/tokens/preTokenizers.js';

const require = createRequire(import.meta.url);
const ranks = (name: string): TiktokenBPE => {
  const loaded = require(`js-tiktoken/ranks/${name}`) as TiktokenBPE | { default: TiktokenBPE };
  return 'default' in loaded ? loaded.default : loaded;
};

/** Piece ends as the scanner finds them. */
function scan(preTokenizer: PreTokenizer, text: string): number[] {
  const ends: number[] = [];
  for (let start = 0; start < text.length;) {
    const end = preTokenizer(text, start);
    if (end <= start) throw new Error(`no progress at ${start}`);
    ends.push(end);
    start = end;
  }
  return ends;
}

/** Piece ends as js-tiktoken finds them: its regex with the `gu` flags. */
function regexEnds(pattern: string, text: string): number[] {
  return [...text.matchAll(new RegExp(pattern, 'gu'))].map((m) => m.index + m[0].length);
}

describe('preTokenizers', function () {
  it('has a scanner for the pattern of every encoding js-tiktoken ships', function () {
    for (const name of ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base', 'gpt2']) {
      expect(preTokenizerFor(ranks(name).pat_str), name).to.not.equal(null);
    }
  });

  it('has none for an unknown pattern (the counter then runs the regex)', function () {
    expect(preTokenizerFor('\\S+|\\s+')).to.equal(null);
  });

  for (const [name, pattern] of [
    ['o200k_base', O200K_PATTERN],
    ['cl100k_base', CL100K_PATTERN],
    ['r50k_base', R50K_PATTERN],
  ] as const) {
    describe(`${name}: the scanner finds the regex's pieces`, function () {
      const preTokenizer = preTokenizerFor(pattern)!;
      const agrees = (text: string): void => {
        expect(scan(preTokenizer, text), JSON.stringify(text)).to.deep.equal(regexEnds(pattern, text));
      };

      it('on strings of characters from every class the pattern distinguishes', function () {
        fc.assert(fc.property(hostile, agrees), { numRuns: 3000 });
      });

      it('on arbitrary code points', function () {
        fc.assert(fc.property(anyUnicode, agrees), { numRuns: 1000 });
      });

      it('on arbitrary UTF-16 code units (unpaired surrogates included)', function () {
        fc.assert(fc.property(anyUtf16, agrees), { numRuns: 1000 });
      });

      it('on hand-picked edge cases', function () {
        for (const text of [
          '',
          "don't I'LL we'Re it's 'sTART",
          'HTTPServer getHTTPResponse iPhone ÀB\u0301c ab\u0301\u0301C',
          '  leading, trailing  ',
          'a\n\n  b\r\n\tc \n',
          '   \u00a0\u3000x',
          '1234567 ٣٣٣٣ 12ab',
          '// comment\n/*x*/ a//b ///\n',
          '\u0301\u0301 \u0301a',
          '😀😀 x😀y',
        ]) {
          agrees(text);
        }
      });
    });
  }
});
