import { expect } from 'chai';
import fc from 'fast-check';
import { decodeStoredText, encodeStoredText, termNeedsJs } from '../../src/repository/storedText.js';
import { textProblem } from '../../src/validation/inputs.js';

/** Strings over the characters the encoding is about, plus anything else. */
const anyUnits = fc.string({
  unit: fc.oneof(
    fc.constantFrom('\u0000', '\uFDD0', '\uFDD1', '\uFDD2', '\uFDD3', '\uFDEF', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', 'a'),
    fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  ),
});

describe('stored text encoding', function () {
  it('round-trips every string exactly', function () {
    fc.assert(
      fc.property(anyUnits, (s) => {
        expect(decodeStoredText(encodeStoredText(s))).to.equal(s);
      }),
      { numRuns: 2000 },
    );
  });

  it('writes only what every store can hold: no NUL, no unpaired surrogate', function () {
    fc.assert(
      fc.property(anyUnits, (s) => {
        const stored = encodeStoredText(s);
        expect(textProblem(stored)).to.equal(null);
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves well-formed text without NUL or U+FDD0 unchanged (the same object, no copy)', function () {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        if (!s.includes('\uFDD0')) expect(encodeStoredText(s)).to.equal(s);
      }),
    );
  });

  it('a term that the stores can evaluate never matches inside an escape sequence', function () {
    fc.assert(
      fc.property(anyUnits, anyUnits, (text, term) => {
        if (termNeedsJs(term) || term === '') return;
        expect(encodeStoredText(text).includes(term)).to.equal(text.includes(term));
      }),
      { numRuns: 3000 },
    );
  });
});
