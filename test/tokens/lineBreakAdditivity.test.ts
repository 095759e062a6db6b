import { expect } from 'chai';
import fc from 'fast-check';
import { CharacterTokenCountEstimator } from '../../src/tokens/TokenCountEstimator.js';
import {
  TiktokenTokenCountEstimator,
  countsApartAtLineBreaks,
  defaultTokenCountEstimator,
  startsApartFromLineBreak,
} from '../../src/tokens/TiktokenTokenCountEstimator.js';
import { anyUtf16, hostile, prose } from './tokenStrings.js';

const text = fc.oneof(hostile, anyUtf16, prose);

describe('Counting apart at line breaks', function () {
  for (const encoding of ['o200k_base', 'cl100k_base'] as const) {
    const estimator = new TiktokenTokenCountEstimator({ encoding });

    it(`${encoding}: a text cut after a line break counts as its parts when the rest starts apart`, function () {
      fc.assert(
        fc.property(text, text, (a, b) => {
          fc.pre(startsApartFromLineBreak(b));
          expect(estimator.estimate(`${a}\n${b}`)).to.equal(estimator.estimate(`${a}\n`) + estimator.estimate(b));
        }),
        { numRuns: 3_000 },
      );
    });

    it(`${encoding}: many lines count as the sum of each line with its break`, function () {
      fc.assert(
        fc.property(fc.array(text, { minLength: 1, maxLength: 8 }), text, (lines, last) => {
          fc.pre(lines.slice(1).every(startsApartFromLineBreak) && startsApartFromLineBreak(last));
          const sum = lines.reduce((n, line) => n + estimator.estimate(`${line}\n`), 0) + estimator.estimate(last);
          expect(estimator.estimate([...lines, last].join('\n'))).to.equal(sum);
        }),
        { numRuns: 1_000 },
      );
    });
  }

  it('a rest starting with a line break, or after punctuation with a slash (o200k_base), is counted with the text before it', function () {
    const o200k = defaultTokenCountEstimator();
    expect(o200k.estimate('x\n\ny')).to.not.equal(o200k.estimate('x\n') + o200k.estimate('\ny'));
    expect(o200k.estimate('a.\n/')).to.not.equal(o200k.estimate('a.\n') + o200k.estimate('/'));
    for (const rest of ['\ny', '/y', ' y', '\ty', '\u00a0y', '']) expect(startsApartFromLineBreak(rest)).to.equal(false);
    for (const rest of ['y', '[8 May 2023] y', '…', '=== END', '\u{1F600}'])
      expect(startsApartFromLineBreak(rest)).to.equal(true);
  });

  it('only the built-in o200k_base and cl100k_base estimators, unchanged, are said to count apart', function () {
    expect(countsApartAtLineBreaks(defaultTokenCountEstimator())).to.equal(true);
    expect(countsApartAtLineBreaks(new TiktokenTokenCountEstimator({ encoding: 'cl100k_base' }))).to.equal(true);
    for (const encoding of ['p50k_base', 'r50k_base', 'gpt2'] as const) {
      expect(countsApartAtLineBreaks(new TiktokenTokenCountEstimator({ encoding }))).to.equal(false);
    }
    class Scaled extends TiktokenTokenCountEstimator {
      override estimate(t: string): number {
        return Math.ceil(super.estimate(t) * 1.1);
      }
    }
    expect(countsApartAtLineBreaks(new Scaled())).to.equal(false);
    const replaced = new TiktokenTokenCountEstimator();
    replaced.estimate = (t: string) => t.length;
    expect(countsApartAtLineBreaks(replaced)).to.equal(false);
    expect(countsApartAtLineBreaks(new CharacterTokenCountEstimator())).to.equal(false);
    expect(countsApartAtLineBreaks({ estimate: (t: string) => t.length })).to.equal(false);
  });
});
