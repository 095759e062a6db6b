import fc from 'fast-check';

/**
 * Strings for the token-counting tests (not a test file): realistic text, and hostile text built from one
 * character of every class the pre-tokenising patterns tell apart.
 */

/**
 * Contraction letters in both cases, `'`, `/`, CR and LF, ASCII and Unicode spaces; letters of every
 * category (Lu, Ll, Lt, Lm, Lo, astral ones too), marks (Mn, Mc, Me), numbers (Nd, Nl, No), symbols,
 * U+0085 and U+001C (line breaks elsewhere, not `\s` here), ZWJ and unpaired surrogates.
 */
export const HOSTILE_UNITS: readonly string[] = [
  ...'aAzZsStTrReEvVmMlLdDxX09',
  "'",
  '/',
  '.',
  ',',
  '-',
  '!',
  '_',
  '"',
  '\u2019',
  ' ',
  ' ',
  '\t',
  '\n',
  '\r',
  '\u000b',
  '\u000c',
  '\u00a0',
  '\u2028',
  '\u3000',
  '\ufeff',
  '\u0085',
  '\u001c',
  '\u200d',
  'é',
  'ß',
  'İ',
  '\u01c5', // ǅ Lt
  '\u02b0', // ʰ Lm
  '中',
  'あ',
  '\u0301', // Mn
  '\u0903', // Mc
  '\u20dd', // Me
  '\u0663', // ٣ Nd
  '\u216b', // Ⅻ Nl
  '\u00bd', // ½ No
  '😀',
  '🏽',
  '\ud835\udc00', // 𝐀 astral Lu
  '\ud835\udc4e', // 𝑎 astral Ll
  '\ud800', // unpaired high surrogate
  '\udc00', // unpaired low surrogate
];

export const hostile = fc.array(fc.constantFrom(...HOSTILE_UNITS), { maxLength: 60 }).map((units) => units.join(''));
export const anyUnicode = fc.string({ unit: 'binary', maxLength: 80 });
export const anyUtf16 = fc.string({
  unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  maxLength: 80,
});

/** Runs without whitespace or punctuation: long pieces, merged on the heap past 64 bytes. */
export const longRuns = fc
  .tuple(
    fc.array(fc.constantFrom('a', 'b', 'q', 'Z', 'é', '中', '=', ' ', '0', '\u0301'), { minLength: 1, maxLength: 3 }),
    fc.integer({ min: 1, max: 400 }),
  )
  .map(([units, length]) => {
    let s = '';
    for (let i = 0; s.length < length; i++) s += units[i % units.length]!;
    return s;
  });

const WORDS = [
  'the',
  'conversation',
  'keeps',
  'long',
  'Sessions',
  'inside',
  'context',
  'window',
  "it's",
  "we'll",
  'archived',
  'never',
  'deleted',
  'summary',
  'tokenizer',
  'Zürich',
  'naïve',
  'café',
  'HTTPServer',
  'getUserById',
  'i18n',
  'COVID-19',
  'e.g.',
  '2024-05-01',
  '1,234.56',
  '日本語',
  'Привет',
  'مرحبا',
  '👋🏽',
  '—',
  '“quoted”',
];
const SEPARATORS = [' ', ' ', ' ', ', ', '. ', '\n', '\n\n', '  ', '\t', ': ', '; ', '! ', '? ', ' (', ') ', ' - '];

/** Prose-like text: words from English and other scripts, punctuation, line breaks. */
export const prose = fc
  .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...SEPARATORS)), { maxLength: 40 })
  .map((parts) => parts.map(([w, s]) => w + s).join(''));

const CODE_PARTS = [
  'const',
  'let',
  'function',
  'return',
  'if',
  '(',
  ')',
  '{',
  '}',
  '[',
  ']',
  ';',
  '=>',
  '===',
  '!==',
  '+=',
  '&&',
  '||',
  '//',
  '/*',
  '*/',
  '.',
  ',',
  ':',
  '"',
  "'",
  '`${x}`',
  '0x1f',
  '42',
  '3.14',
  'camelCaseName',
  'snake_case',
  'SCREAMING_CASE',
  'self.value',
  'import os',
  'def f(x):',
  '\n',
  '\n    ',
  '\n\t\t',
  '  ',
  ' ',
  '#',
  '@',
  '$1',
  '<div>',
  '</div>',
  'C:\\path\\file.txt',
  '/usr/local/bin',
  'https://example.com/a?b=c&d=e',
  '|',
  '^',
  '~',
];

/** Code- and tool-output-like text: identifiers, operators, indentation, paths, URLs. */
export const code = fc.array(fc.constantFrom(...CODE_PARTS), { maxLength: 60 }).map((parts) => parts.join(''));

/** JSON as tools return it. */
export const json = fc.json({ maxDepth: 3 });

/** Deterministic pseudo-random strings (mulberry32), for fixed inputs. */
export function randomFrom(alphabet: string, length: number, seed: number): string {
  let state = seed >>> 0;
  let s = '';
  for (let i = 0; i < length; i++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const r = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    s += alphabet[Math.floor(r * alphabet.length)];
  }
  return s;
}
