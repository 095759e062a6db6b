/**
 * A reversible encoding of event content for the durable stores, so that what is appended is what is read,
 * character for character, on every backend. PostgreSQL cannot store U+0000 in text or jsonb, and an
 * unpaired UTF-16 surrogate has no UTF-8 form (SQLite and PostgreSQL would store U+FFFD instead). Those
 * characters are written as sequences of noncharacters (U+FDD0–U+FDEF, reserved by Unicode for internal
 * use), introduced by U+FDD0, which is itself doubled when it occurs:
 *
 *   U+FDD0 → FDD0 FDD0     U+0000 → FDD0 FDD1
 *   unpaired high surrogate D800+v → FDD0 FDD2 (FDD0 + v>>5) (FDD0 + v&31); a low one DC00+v → FDD0 FDD3 …
 *
 * Strings without these characters (nearly all) are stored unchanged. Since a sequence holds only
 * noncharacters, a search term without them never matches inside one: stores keep evaluating keywords
 * themselves, and only terms holding such characters are matched in JavaScript over the decoded text.
 */
const ESC = 0xfdd0;
const NUL_TAG = 0xfdd1;
const HIGH_TAG = 0xfdd2;
const LOW_TAG = 0xfdd3;
export const TEXT_ESCAPE = String.fromCharCode(ESC);

/** Anything encodeStoredText may have to rewrite; a valid surrogate pair matches too and is left alone. */
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const NEEDS_ENCODING = /[\u0000\uFDD0\uD800-\uDFFF]/;

const char = (c: number) => String.fromCharCode(c);
const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

export function encodeStoredText(value: string): string {
  if (!NEEDS_ENCODING.test(value)) return value;
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0) out += char(ESC) + char(NUL_TAG);
    else if (c === ESC) out += char(ESC) + char(ESC);
    else if (isHigh(c) && i + 1 < value.length && isLow(value.charCodeAt(i + 1))) {
      out += value.slice(i, i + 2);
      i++;
    } else if (isHigh(c) || isLow(c)) {
      const v = c - (isHigh(c) ? 0xd800 : 0xdc00);
      out += char(ESC) + char(isHigh(c) ? HIGH_TAG : LOW_TAG) + char(ESC + (v >> 5)) + char(ESC + (v & 31));
    } else out += value[i]!;
  }
  return out;
}

const isPayload = (c: number) => c >= ESC && c < ESC + 32;

export function decodeStoredText(value: string): string {
  if (!value.includes(TEXT_ESCAPE)) return value;
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c !== ESC) {
      out += value[i]!;
      continue;
    }
    const tag = value.charCodeAt(i + 1);
    if (tag === ESC) {
      out += TEXT_ESCAPE;
      i++;
    } else if (tag === NUL_TAG) {
      out += '\u0000';
      i++;
    } else if (
      (tag === HIGH_TAG || tag === LOW_TAG) &&
      isPayload(value.charCodeAt(i + 2)) &&
      isPayload(value.charCodeAt(i + 3))
    ) {
      const v = ((value.charCodeAt(i + 2) - ESC) << 5) | (value.charCodeAt(i + 3) - ESC);
      out += char((tag === HIGH_TAG ? 0xd800 : 0xdc00) + v);
      i += 3;
    } else {
      // Not a sequence this encoder writes (text stored before it existed): kept as it is.
      out += value[i]!;
    }
  }
  return out;
}

/** Applies `text` to every string (object keys included) of a JSON value. */
export function mapJsonStrings(value: unknown, text: (s: string) => string): unknown {
  if (typeof value === 'string') return text(value);
  if (Array.isArray(value)) return value.map((v) => mapJsonStrings(v, text));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [text(k), mapJsonStrings(v, text)]));
  }
  return value;
}

/** A search term the stores cannot match on the encoded text: NUL, a noncharacter of the escape range, a lone surrogate. */
export function termNeedsJs(term: string): boolean {
  // eslint-disable-next-line no-control-regex -- matching NUL is the point
  return /[\u0000\uFDD0-\uFDEF\uD800-\uDFFF]/.test(term.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''));
}
