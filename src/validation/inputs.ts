import { InvalidArgumentError } from '../errors.js';

/**
 * Run-time checks for everything the library accepts from callers: plain JavaScript and JSON bodies reach
 * the public API without a compiler in between. Each check throws InvalidArgumentError naming the field and
 * the type of the value it got, and returns the checked (sometimes normalised) value.
 *
 * No schema library: the rules that matter here — one text policy for every stored string, JSON-exact
 * metadata, the date range every backend stores — are custom predicates in any library, and the messages
 * some of these errors must carry are fixed by the public contract.
 */

/** The earliest and latest instant every backend stores exactly (PostgreSQL's timestamptz stops at 4713 BC). */
export const MIN_TIME_MS = Date.parse('0001-01-01T00:00:00.000Z');
export const MAX_TIME_MS = 8.64e15;

/** Nesting deeper than this in metadata is refused (a guard against stack exhaustion, not a style rule). */
const MAX_JSON_DEPTH = 64;

/** What a value is, for error messages: `string`, `number`, `NaN`, `array`, `null`, `Invalid Date`, `Map`… */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'NaN';
    if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
    return 'number';
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : 'Date';
  if (typeof value === 'object') {
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof name === 'string' && name !== '' && name !== 'Object' ? name : 'object';
  }
  return typeof value;
}

export function invalid(field: string, expectation: string, value: unknown): InvalidArgumentError {
  return new InvalidArgumentError(`${field} must be ${expectation} (got ${describeType(value)})`);
}

/**
 * The text policy, the same on every backend. Content — message texts, tool calls and results, reasoning,
 * event metadata — may be any JavaScript string, NUL and unpaired surrogates included (tool output often
 * holds them): the durable stores encode what they cannot hold and read back exactly what was appended.
 * Identifiers — event, session and user ids, branch names — and session metadata must be well-formed
 * Unicode without NUL: PostgreSQL cannot store U+0000 and an unpaired UTF-16 surrogate has no UTF-8 form.
 * Returns a description of the first character an identifier may not hold, or null.
 */
export function textProblem(value: string): string | null {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0) return `a NUL character (U+0000) at index ${i}`;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return `an unpaired surrogate (U+${c.toString(16).toUpperCase()}) at index ${i}`;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return `an unpaired surrogate (U+${c.toString(16).toUpperCase()}) at index ${i}`;
  }
  return null;
}

/** Content: any string. */
export function requireString(value: unknown, field: string): string {
  if (typeof value !== 'string') throw invalid(field, 'a string', value);
  return value;
}

/** The longest participant name accepted: OpenAI's limit for a message's `name`. */
export const MAX_PARTICIPANT_NAME_LENGTH = 64;

/**
 * Characters a participant name may not hold: control and format characters (line breaks included) and the
 * punctuation of the transcript rendering (`Caroline (user): …`, `[tool calls: …]`), so a name can neither
 * start a new entry nor pass for a role, a summary label or a recall block's marker.
 */
const NAME_FORBIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}:()[\]<>]/u;

/**
 * What is wrong with a participant name (`UserMessage.name`, `AssistantMessage.name`), as the end of a sentence
 * ("must not be empty"), or null: a name is 1 to 64 characters without surrounding whitespace, line breaks,
 * control characters or any of `: ( ) [ ] < >`. A name is a label the transcript, the recall block and the
 * search index repeat, not content: it is refused, never repaired, so what is stored is what was sent.
 */
export function participantNameProblem(value: string): string | null {
  if (value.trim() === '') return 'must not be empty';
  if (value.length > MAX_PARTICIPANT_NAME_LENGTH)
    return `must be at most ${MAX_PARTICIPANT_NAME_LENGTH} characters (got ${value.length})`;
  if (value.trim() !== value) return 'must not start or end with whitespace';
  const problem = textProblem(value);
  if (problem !== null) return `must not contain ${problem}`;
  const forbidden = NAME_FORBIDDEN.exec(value);
  if (forbidden === null) return null;
  const c = forbidden[0];
  const shown = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(c)
    ? `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`
    : `'${c}'`;
  return `must not contain ${shown} at index ${forbidden.index} (a name may not hold line breaks, control characters or : ( ) [ ] < >)`;
}

/** A participant name (see participantNameProblem); InvalidArgumentError naming the field otherwise. */
export function requireParticipantName(value: unknown, field: string): string {
  if (typeof value !== 'string') throw invalid(field, 'a string', value);
  const problem = participantNameProblem(value);
  if (problem !== null) throw new InvalidArgumentError(`${field} ${problem}`);
  return value;
}

/** An identifier-like string (the text policy: well-formed, no NUL); empty allowed. */
export function requireStorableString(value: unknown, field: string): string {
  if (typeof value !== 'string') throw invalid(field, 'a string', value);
  const problem = textProblem(value);
  if (problem !== null) throw new InvalidArgumentError(`${field} must not contain ${problem}`);
  return value;
}

/** A non-blank string that may be stored; "<field> must not be null or empty" otherwise (the contract's words). */
export function requireStorableText(value: unknown, field: string): string {
  if (value === null || value === undefined) throw new InvalidArgumentError(`${field} must not be null or empty`);
  if (typeof value !== 'string')
    throw new InvalidArgumentError(`${field} must not be null or empty (got ${describeType(value)})`);
  if (value.trim() === '') throw new InvalidArgumentError(`${field} must not be null or empty`);
  return requireStorableString(value, field);
}

export function optionalBoolean(value: unknown, field: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalid(field, 'a boolean', value);
  return value;
}

/** A valid Date inside the range every backend stores; a copy, so the caller's later mutation changes nothing. */
export function requireDate(value: unknown, field: string): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw invalid(field, 'a valid Date', value);
  const t = value.getTime();
  if (t < MIN_TIME_MS || t > MAX_TIME_MS) {
    throw new InvalidArgumentError(`${field} must be between year 1 and year 275760 (got ${value.toISOString()})`);
  }
  return new Date(t);
}

/** `base + offsetMs` as a Date, refused when it leaves the supported range (a huge time to live). */
export function requireOffsetDate(base: Date, offsetMs: number, field: string): Date {
  const t = base.getTime() + offsetMs;
  if (!Number.isFinite(t) || t < MIN_TIME_MS || t > MAX_TIME_MS) {
    throw new InvalidArgumentError(`${field} of ${offsetMs} ms puts the date outside the supported range (years 1 to 275760)`);
  }
  return new Date(t);
}

export function requireFiniteNumber(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(field, 'a finite number', value);
  return value;
}

/** An integer in [min, max]: NaN, fractions, ±Infinity and numeric strings ("5") are refused. */
export function requireInteger(
  value: unknown,
  field: string,
  min = Number.MIN_SAFE_INTEGER,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw invalid(field, 'an integer', value);
  if (value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `between ${min} and ${max}`;
    throw new InvalidArgumentError(`${field} must be ${range} (got ${value})`);
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * A JSON object that every backend stores and reads back identically: plain objects and arrays, strings,
 * finite numbers, booleans and null; no cycles. With `wellFormedText` its strings and keys also follow the
 * identifier rule (session metadata). Returns a deep copy in which properties whose value is `undefined`
 * are dropped (as JSON drops them) and -0 is 0 (as JSON writes it).
 */
export function requireJsonObject(value: unknown, field: string, wellFormedText = false): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) throw invalid(field, 'a plain object', value);
  return copyJson(value, field, new Set(), 0, wellFormedText) as Record<string, unknown>;
}

function copyJson(value: unknown, path: string, seen: Set<object>, depth: number, strict: boolean): unknown {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'string') return strict ? requireStorableString(value, path) : value;
  if (typeof value === 'number') return Object.is(value, -0) ? 0 : requireFiniteNumber(value, path);
  if (depth >= MAX_JSON_DEPTH) throw new InvalidArgumentError(`${path} nests deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(value)) {
    if (seen.has(value)) throw new InvalidArgumentError(`${path} must not contain a cycle`);
    seen.add(value);
    const out = value.map((item, i) => {
      if (item === undefined) throw invalid(`${path}[${i}]`, 'a JSON value', item);
      return copyJson(item, `${path}[${i}]`, seen, depth + 1, strict);
    });
    seen.delete(value);
    return out;
  }
  if (isPlainObject(value)) {
    if (seen.has(value)) throw new InvalidArgumentError(`${path} must not contain a cycle`);
    seen.add(value);
    const entries: [string, unknown][] = [];
    for (const [key, item] of Object.entries(value)) {
      const problem = strict ? textProblem(key) : null;
      if (problem !== null) throw new InvalidArgumentError(`${path} has a key containing ${problem}`);
      if (item === undefined) continue;
      entries.push([key, copyJson(item, `${path}.${key}`, seen, depth + 1, strict)]);
    }
    seen.delete(value);
    // fromEntries defines own properties, so a "__proto__" key stays data, as JSON.parse makes it.
    return Object.fromEntries(entries);
  }
  throw invalid(path, 'a JSON value', value);
}
