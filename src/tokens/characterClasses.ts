/**
 * The character classes the encodings' pre-tokenising patterns distinguish, as small integers so that a
 * hand-written scanner can branch on them. They partition all code points: every code point has exactly
 * one class, and each pattern's character sets are unions of these classes.
 */
export const END = 0; // past the end of the text
export const UPPER = 1; // \p{Lu} \p{Lt}
export const LOWER = 2; // \p{Ll}
export const OTHER_LETTER = 3; // \p{Lm} \p{Lo}: letters in both of o200k's upper and lower sets
export const MARK = 4; // \p{M}: not \p{L}, yet in both of o200k's letter sets
export const NUMBER = 5; // \p{N}
export const NEWLINE = 6; // \r \n
export const SPACE = 7; // every other \s (as JavaScript defines it)
export const OTHER = 8; // the rest: punctuation, symbols, controls, unpaired surrogates

/** How each class is recognised, tested in this order (the last class, OTHER, is what none matched). */
const CLASS_PATTERNS: readonly [RegExp, number][] = [
  [/^[\p{Lu}\p{Lt}]$/u, UPPER],
  [/^\p{Ll}$/u, LOWER],
  [/^[\p{Lm}\p{Lo}]$/u, OTHER_LETTER],
  [/^\p{M}$/u, MARK],
  [/^\p{N}$/u, NUMBER],
  [/^[\r\n]$/u, NEWLINE],
  [/^\s$/u, SPACE],
];

function classify(codePoint: number): number {
  // An unpaired surrogate is a code point of its own to a `u` regex, and in none of the sets above.
  if (codePoint >= 0xd800 && codePoint <= 0xdfff) return OTHER;
  const char = String.fromCodePoint(codePoint);
  for (const [pattern, cls] of CLASS_PATTERNS) if (pattern.test(char)) return cls;
  return OTHER;
}

/**
 * Class per code point, filled on first sight from the same Unicode properties the patterns use (so it
 * follows the engine's Unicode version). 1.1 MB, shared by every encoding; 0 means not yet classified.
 */
const classes = new Uint8Array(0x110000);
for (let c = 0; c < 0x80; c++) classes[c] = classify(c);

/** The class of an ASCII code unit (< 0x80). */
export function asciiClass(unit: number): number {
  return classes[unit]!;
}

/** The class of the code point starting at `index`, or END past the end. */
export function classAt(text: string, index: number): number {
  if (index >= text.length) return END;
  const unit = text.charCodeAt(index);
  if (unit < 0x80) return classes[unit]!;
  const codePoint = codePointAt(text, index, unit);
  const known = classes[codePoint]!;
  if (known !== 0) return known;
  const cls = classify(codePoint);
  classes[codePoint] = cls;
  return cls;
}

/** Code units taken by the code point starting at `index` (2 for a surrogate pair, else 1). */
export function widthAt(text: string, index: number): number {
  const unit = text.charCodeAt(index);
  if (unit < 0xd800 || unit > 0xdbff || index + 1 >= text.length) return 1;
  const low = text.charCodeAt(index + 1);
  return low >= 0xdc00 && low <= 0xdfff ? 2 : 1;
}

function codePointAt(text: string, index: number, unit: number): number {
  if (unit < 0xd800 || unit > 0xdbff || index + 1 >= text.length) return unit;
  const low = text.charCodeAt(index + 1);
  return low >= 0xdc00 && low <= 0xdfff ? (unit - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000 : unit;
}
