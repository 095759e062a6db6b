import {
  MARK,
  NEWLINE,
  NUMBER,
  LOWER,
  OTHER,
  OTHER_LETTER,
  SPACE,
  UPPER,
  asciiClass,
  classAt,
  widthAt,
} from './characterClasses.js';

/**
 * Returns where the piece starting at `start` ends (exclusive): the end of the match the encoding's
 * pre-tokenising pattern finds at `start`. Pieces tile the text, so scanning from 0 to each returned end
 * yields exactly the matches of `text.matchAll(new RegExp(pattern, 'gu'))`.
 */
export type PreTokenizer = (text: string, start: number) => number;

/** The patterns js-tiktoken ships, each matched by a hand-written scanner below. */
export const O200K_PATTERN =
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
export const CL100K_PATTERN =
  "('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/** p50k_base, r50k_base and gpt2. */
export const R50K_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/**
 * The hand-written scanner for a pattern, or null for a pattern it does not know (the caller then runs
 * the regex). The scanners find the same pieces in about half the regex engine's time (benchmarks/estimator.ts):
 * each alternative below is the regex's, tried in the regex's order, with its backtracking worked out in
 * advance (the comments say how).
 */
export function preTokenizerFor(pattern: string): PreTokenizer | null {
  if (pattern === O200K_PATTERN) return o200k;
  if (pattern === CL100K_PATTERN) return cl100k;
  if (pattern === R50K_PATTERN) return r50k;
  return null;
}

// Sets of classes as bit masks: (1 << cls) & SET.
const bit = (cls: number): number => 1 << cls;
/** \p{L} */
const LETTER = bit(UPPER) | bit(LOWER) | bit(OTHER_LETTER);
/** o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] */
const UPPERISH = bit(UPPER) | bit(OTHER_LETTER) | bit(MARK);
/** o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}] */
const LOWERISH = bit(LOWER) | bit(OTHER_LETTER) | bit(MARK);
/** [^\r\n\p{L}\p{N}]: the optional character before a word. */
const PREFIX = bit(SPACE) | bit(MARK) | bit(OTHER);
/** [^\s\p{L}\p{N}] */
const PUNCTUATION = bit(MARK) | bit(OTHER);

const APOSTROPHE = 0x27;
const SPACE_CHAR = 0x20;
const CR = 0x0d;
const LF = 0x0a;
const SLASH = 0x2f;

/**
 * End of `'s|'t|'re|'ve|'m|'ll|'d` at `index` (any letter case when `anyCase`), or `index` when there is
 * none. The alternatives differ in their first letter, so at most one can match.
 */
function contractionEnd(text: string, index: number, anyCase: boolean): number {
  if (text.charCodeAt(index) !== APOSTROPHE) return index;
  // `| 0x20` lower-cases an ASCII letter and maps nothing else onto one.
  const fold = anyCase ? 0x20 : 0;
  const first = text.charCodeAt(index + 1) | fold;
  if (first === 0x73 || first === 0x74 || first === 0x6d || first === 0x64) return index + 2; // s t m d
  const second = text.charCodeAt(index + 2) | fold;
  if ((first === 0x72 || first === 0x76) && second === 0x65) return index + 3; // re ve
  if (first === 0x6c && second === 0x6c) return index + 3; // ll
  return index;
}

/** End of a run of code points whose class is in `set`, starting at `index`. */
function runEnd(text: string, index: number, set: number): number {
  let i = index;
  for (;;) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) {
      if (!(bit(asciiClass(unit)) & set)) return i;
      i++;
    } else {
      // Past the end `unit` is NaN and classAt gives END, in no set.
      if (!(bit(classAt(text, i)) & set)) return i;
      i += widthAt(text, i);
    }
  }
}

/** The class at `index`, whose code unit is `unit` (read once by the caller). */
function classOf(text: string, index: number, unit: number): number {
  return unit < 0x80 ? asciiClass(unit) : classAt(text, index);
}

/** End of at most `max` numbers (\p{N}) starting at `index` (the caller knows there is one). */
function numbersEnd(text: string, index: number, max: number): number {
  let i = index;
  for (let taken = 0; taken < max && classAt(text, i) === NUMBER; taken++) i += widthAt(text, i);
  return i;
}

/**
 * `\s*[\r\n]+|\s+(?!\S)|\s+` at a whitespace character (`\s+(?!\S)|\s+` without `newlines`).
 * `\s*[\r\n]+` backtracks to the run's last line break: the piece ends right after it. `\s+(?!\S)` gives
 * back the run's last character when a non-space follows (it then starts the next piece, e.g. " word");
 * a single space before a non-space is left to `\s+`. Whitespace is all in the BMP: one code unit each.
 */
function whitespaceEnd(text: string, start: number, newlines: boolean): number {
  let i = start;
  let lastNewline = -1;
  for (;;) {
    const cls = classOf(text, i, text.charCodeAt(i));
    if (cls === NEWLINE) lastNewline = i;
    else if (cls !== SPACE) break;
    i++;
  }
  if (newlines && lastNewline >= 0) return lastNewline + 1;
  if (i >= text.length || i - start < 2) return i;
  return i - 1;
}

/**
 * o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(contraction)?` at `start`, or -1.
 * The first set, taken greedily, backs off to the last position where the second set can start: the first
 * character after the run if it is lower-case, otherwise the run's last character that is in both sets.
 */
function o200kLowerWordEnd(text: string, start: number): number {
  let i = start;
  let lastInBoth = -1;
  let cls = classAt(text, i);
  while (bit(cls) & UPPERISH) {
    if (cls !== UPPER) lastInBoth = i;
    i += widthAt(text, i);
    cls = classAt(text, i);
  }
  let from: number;
  if (cls === LOWER) from = i;
  else if (lastInBoth >= 0) from = lastInBoth;
  else return -1;
  return contractionEnd(text, runEnd(text, from, LOWERISH), true);
}

/** o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(contraction)?` at `start`, or -1. */
function o200kUpperWordEnd(text: string, start: number): number {
  const upperEnd = runEnd(text, start, UPPERISH);
  if (upperEnd === start) return -1;
  return contractionEnd(text, runEnd(text, upperEnd, LOWERISH), true);
}

/** ` ?[^\s\p{L}\p{N}]+` followed by any of `trailing`'s characters, or -1. */
function punctuationEnd(text: string, start: number, trailing: (unit: number) => boolean): number {
  let i = start;
  if (text.charCodeAt(i) === SPACE_CHAR && bit(classOf(text, i + 1, text.charCodeAt(i + 1))) & PUNCTUATION) i++;
  if (!(bit(classOf(text, i, text.charCodeAt(i))) & PUNCTUATION)) return -1;
  i = runEnd(text, i, PUNCTUATION);
  while (i < text.length && trailing(text.charCodeAt(i))) i++;
  return i;
}

const isLineBreakOrSlash = (unit: number): boolean => unit === CR || unit === LF || unit === SLASH;
const isLineBreak = (unit: number): boolean => unit === CR || unit === LF;

/**
 * The word alternatives on ASCII text: an optional prefix (a space or ASCII punctuation), letters, and for
 * o200k an optional contraction. With `casedRuns` (o200k) the letters are `[A-Z]*[a-z]*`: on ASCII, o200k's
 * two word alternatives reduce to that, as no ASCII character is in both of its letter sets. Otherwise
 * (cl100k, whose contractions are matched before) they are `[A-Za-z]*`. Returns the word's end, NO_WORD when
 * no letter follows the prefix, or UNDECIDED when a non-ASCII character comes next: a non-ASCII letter or
 * mark could continue the word, so the general scanner decides.
 */
function asciiWordEnd(text: string, start: number, casedRuns: boolean): number {
  let i = start;
  let unit = text.charCodeAt(i);
  const cls = asciiClass(unit);
  if (cls === SPACE || cls === OTHER) unit = text.charCodeAt(++i);
  const wordStart = i;
  if (casedRuns) {
    while (unit >= 0x41 && unit <= 0x5a) unit = text.charCodeAt(++i);
    while (unit >= 0x61 && unit <= 0x7a) unit = text.charCodeAt(++i);
  } else {
    while ((unit | 0x20) >= 0x61 && (unit | 0x20) <= 0x7a) unit = text.charCodeAt(++i);
  }
  // `unit` is NaN at the end of the text, which ends the word as an ASCII character would.
  if (unit >= 0x80) return UNDECIDED;
  if (i === wordStart) return NO_WORD;
  return casedRuns ? contractionEnd(text, i, true) : i;
}

/** asciiWordEnd: there is no word at `start` (the word alternatives cannot match). */
const NO_WORD = -1;
/** asciiWordEnd: a non-ASCII character follows; the general scanner must decide. */
const UNDECIDED = -2;

function o200k(text: string, start: number): number {
  let word = UNDECIDED;
  if (text.charCodeAt(start) < 0x80) {
    word = asciiWordEnd(text, start, true);
    if (word >= 0) return word;
  }
  const cls = classAt(text, start);
  const clsBit = bit(cls);
  if (word === UNDECIDED && clsBit & (PREFIX | UPPERISH | LOWERISH)) {
    // Each word alternative is tried with the optional prefix character first, then without it.
    const prefixed = clsBit & PREFIX ? start + widthAt(text, start) : -1;
    const wordish = (clsBit & (UPPERISH | LOWERISH)) !== 0;
    let end = prefixed >= 0 ? o200kLowerWordEnd(text, prefixed) : -1;
    if (end < 0 && wordish) end = o200kLowerWordEnd(text, start);
    if (end < 0 && prefixed >= 0) end = o200kUpperWordEnd(text, prefixed);
    if (end < 0 && wordish) end = o200kUpperWordEnd(text, start);
    if (end >= 0) return end;
  }
  if (cls === NUMBER) return numbersEnd(text, start, 3);
  const end = punctuationEnd(text, start, isLineBreakOrSlash);
  if (end >= 0) return end;
  return whitespaceEnd(text, start, true);
}

function cl100k(text: string, start: number): number {
  const contraction = contractionEnd(text, start, true);
  if (contraction > start) return contraction;
  let word = UNDECIDED;
  if (text.charCodeAt(start) < 0x80) {
    word = asciiWordEnd(text, start, false);
    if (word >= 0) return word;
  }
  const cls = classAt(text, start);
  if (word === UNDECIDED && bit(cls) & LETTER) return runEnd(text, start, LETTER);
  if (word === UNDECIDED && bit(cls) & PREFIX) {
    const next = start + widthAt(text, start);
    if (bit(classAt(text, next)) & LETTER) return runEnd(text, next, LETTER);
  }
  if (cls === NUMBER) return numbersEnd(text, start, 3);
  const end = punctuationEnd(text, start, isLineBreak);
  if (end >= 0) return end;
  return whitespaceEnd(text, start, true);
}

function r50k(text: string, start: number): number {
  const contraction = contractionEnd(text, start, false);
  if (contraction > start) return contraction;
  // ` ?\p{L}+`, ` ?\p{N}+` and ` ?[^\s\p{L}\p{N}]+`: the three sets are disjoint, so the class after the
  // optional space picks the alternative.
  const from = text.charCodeAt(start) === SPACE_CHAR && start + 1 < text.length ? start + 1 : start;
  const cls = classAt(text, from);
  if (bit(cls) & LETTER) return runEnd(text, from, LETTER);
  if (cls === NUMBER) return runEnd(text, from, bit(NUMBER));
  if (bit(cls) & PUNCTUATION) return runEnd(text, from, PUNCTUATION);
  return whitespaceEnd(text, start, false);
}
