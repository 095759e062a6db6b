import { expect } from 'chai';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k_base from 'js-tiktoken/ranks/o200k_base';
import cl100k_base from 'js-tiktoken/ranks/cl100k_base';
import { InvalidArgumentError, TiktokenTokenCountEstimator, defaultTokenCountEstimator } from 'session-compaction';
import { CharacterTokenCountEstimator } from 'session-compaction/spi';
import { expectThrows } from '../support/fixtures.js';
import { randomFrom } from './tokenStrings.js';

const exactO200k = new Tiktoken(o200k_base);
const exact = (text: string, enc: Tiktoken = exactO200k) => enc.encode(text, [], []).length;

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

const PROSE =
  'Compaction keeps long conversations inside the context window. Old turns are archived, never deleted, ' +
  "and a summary may replace them. It's the user's choice — “quotes”, apostrophes, and numbers like 1,234.56 or 2024-05-01 count too.\n\n" +
  'Second paragraph:\tindented, with trailing spaces   \n';
const CODE = `import { expect } from 'chai';
export async function compact(sessionId: string): Promise<number> {
  const events = await repo.findEvents(sessionId, EventFilter.active());
  for (let i = 0; i < events.length; i++) { if (events[i]!.isSynthetic()) continue; }
  return events.reduce((n, e) => n + e.id.length, 0x1f) >>> 0; // done
}
SELECT id, "timestamp" FROM ai_session_event WHERE session_id = $1 ORDER BY seq;`;
const UNICODE = 'Grüße aus Zürich! 日本語のテキストと中文文本。 Привет, мир. مرحبا 👋🏽 👨‍👩‍👧‍👦 🇫🇷 emoji 🎉🎉🎉 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math.';
const SPECIAL = 'Before <|endoftext|> after, and <|im_start|>user\nhello<|im_end|> plus <|fim_prefix|>.';

describe('TiktokenTokenCountEstimator', function () {
  const estimator = new TiktokenTokenCountEstimator();

  before(function () {
    // Loads the shared o200k_base rank table once, outside any timed section.
    estimator.estimate('warm up');
  });

  describe('is exact against js-tiktoken (o200k_base)', function () {
    for (const [name, text] of [
      ['ordinary prose', PROSE],
      ['code', CODE],
      ['unicode and emoji', UNICODE],
      ["text containing '<|endoftext|>' and other special-token strings (counted as plain text)", SPECIAL],
      ['the empty string', ''],
      ['whitespace only', ' \n\t  \n\n'],
    ] as const) {
      it(`${name}`, function () {
        expect(estimator.estimate(text)).to.equal(exact(text));
      });
    }

    it('a long realistic mix (prose + code + unicode repeated 50 times)', function () {
      const text = Array.from({ length: 50 }, (_, i) => `${i}: ${PROSE}${CODE}${UNICODE}`).join('\n');
      expect(estimator.estimate(text)).to.equal(exact(text));
    });

    it('long runs without whitespace: one letter, random letters, `qqqqqqab…`, base64 (no chunking error)', function () {
      this.timeout(60_000);
      for (const text of [
        'a'.repeat(2000),
        randomFrom('abcdefghijklmnopqrstuvwxyz', 2000, 42),
        'qqqqqqab'.repeat(250),
        randomFrom(BASE64, 3000, 3),
      ]) {
        expect(estimator.estimate(text), text.slice(0, 20)).to.equal(exact(text));
      }
    });
  });

  it('is exact for cl100k_base too', function () {
    const cl = new TiktokenTokenCountEstimator({ encoding: 'cl100k_base' });
    const exactCl = new Tiktoken(cl100k_base);
    for (const text of [PROSE, CODE, UNICODE, SPECIAL, randomFrom('abcdefghijklmnopqrstuvwxyz', 1000, 5)]) {
      expect(cl.estimate(text)).to.equal(exact(text, exactCl));
    }
  });

  // Speed (linear time on adversarial input) is measured in benchmarks/estimator.ts, not asserted here: a timing
  // assertion fails on a loaded machine whatever its bound.

  it('shares the rank table: a second estimator’s first call does not reload it', function () {
    const second = new TiktokenTokenCountEstimator();
    const start = performance.now();
    const n = second.estimate('a fresh estimator, first call');
    const ms = performance.now() - start;
    expect(n).to.equal(exact('a fresh estimator, first call'));
    // Loading o200k_base takes ~600 ms on an idle machine (more under load); a shared table makes this a plain
    // count of microseconds, so the bound separates the two cases even on a busy machine.
    expect(ms, `${ms.toFixed(1)} ms`).to.be.lessThan(250);
  });

  it('defaultTokenCountEstimator is one shared o200k_base instance', function () {
    expect(defaultTokenCountEstimator()).to.equal(defaultTokenCountEstimator());
    expect(defaultTokenCountEstimator().encoding).to.equal('o200k_base');
  });

  it('rejects an unknown encoding and a non-string text', function () {
    expectThrows(
      () => new TiktokenTokenCountEstimator({ encoding: 'nope' as unknown as 'o200k_base' }),
      InvalidArgumentError,
      'encoding must be one of',
    );
    expectThrows(() => estimator.estimate(null as unknown as string), InvalidArgumentError, 'text must not be null');
  });

  it('CharacterTokenCountEstimator counts UTF-16 code units', function () {
    expect(new CharacterTokenCountEstimator().estimate('User: hello')).to.equal(11);
  });
});
