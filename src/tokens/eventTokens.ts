import { formatEvent } from '../session/formatEvent.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { TextTokenMemo } from './TextTokenMemo.js';
import type { TokenCountEstimator } from './TokenCountEstimator.js';

/** Events remembered per estimator; at ~100 bytes an entry this bounds the memo to a few MB. */
export const EVENT_TOKEN_CACHE_SIZE = 100_000;

interface Entry {
  length: number;
  hash: number;
  tokens: number;
}

const caches = new WeakMap<TokenCountEstimator, Map<string, Entry>>();
/**
 * Events are immutable, so the same object always has the same count: a hit here skips formatting and
 * hashing altogether (repositories that hand out the same objects, like the in-memory one, benefit most).
 */
const byObject = new WeakMap<TokenCountEstimator, WeakMap<SessionEvent, number>>();

/** FNV-1a: cheap next to tokenising, and guards the memo against two different events reusing one id. */
function fingerprint(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * estimate(formatEvent(event)) — with the reasoning when the estimator `countsReasoning` — memoised per estimator and (session id, event id), so that compacting a
 * long session again costs only its new events, and by text for texts of up to TEXT_TOKEN_CACHE_CHARS characters, so
 * that a copy under another id is not counted again. Every trigger and strategy counts through here.
 */
export function estimateEventTokens(event: SessionEvent, estimator: TokenCountEstimator): number {
  let objects = byObject.get(estimator);
  if (objects === undefined) {
    objects = new WeakMap();
    byObject.set(estimator, objects);
  }
  const known = objects.get(event);
  if (known !== undefined) return known;
  const tokens = countThroughMemo(event, estimator);
  objects.set(event, tokens);
  return tokens;
}

/**
 * One live iterator per memo, kept across evictions. `cache.keys().next()` afresh would walk every slot deleted
 * since the table was last rebuilt: once the memo is full that made each insert cost tens of microseconds and
 * grow (measured: 30,000 evictions from a full memo took 1.8 s, 0.3 s with the kept iterator). A Map iterator
 * is live: it sees entries added after it was made and skips deleted ones, so it stays in insertion order.
 */
const evictors = new WeakMap<Map<string, Entry>, Iterator<string>>();

function evictOldest(cache: Map<string, Entry>): void {
  let evictor = evictors.get(cache);
  let next = evictor?.next();
  if (evictor === undefined || next === undefined || next.done === true) {
    evictor = cache.keys();
    evictors.set(cache, evictor);
    next = evictor.next();
  }
  if (next.done !== true) cache.delete(next.value);
}

/** The metadata key of a masked copy's original (METADATA_MASKED_FROM of the compaction layer). */
const MASKED_FROM = 'maskedFrom';

/**
 * Where an event's count is remembered: its (session, id) — or, for a masked copy, its original's id. A copy
 * gets a fresh id each time a strategy masks the original, and a deferred masking (`minSavedTokens`) masks the
 * same originals again on every run: keyed by the original, the same copy text is counted once, not once a run.
 * The length and fingerprint checks still tell two different copies of one original apart.
 */
function memoKey(event: SessionEvent): string {
  const from = event.metadata[MASKED_FROM];
  return typeof from === 'string' ? event.sessionId + '\u0000' + from + '\u0000masked' : event.sessionId + '\u0000' + event.id;
}

function countThroughMemo(event: SessionEvent, estimator: TokenCountEstimator): number {
  const text = formatEvent(event, { reasoning: estimator.countsReasoning === true });
  let cache = caches.get(estimator);
  if (cache === undefined) {
    cache = new Map();
    caches.set(estimator, cache);
  }
  const key = memoKey(event);
  const hash = fingerprint(text);
  const hit = cache.get(key);
  if (hit !== undefined && hit.length === text.length && hit.hash === hash) return hit.tokens;
  const tokens = countByText(text, estimator);
  // Least recently inserted goes first; re-inserting a hit is not worth its cost on this hot path.
  if (cache.size >= EVENT_TOKEN_CACHE_SIZE) evictOldest(cache);
  cache.set(key, { length: text.length, hash, tokens });
  return tokens;
}

/** Texts of up to this many characters are also remembered by their text (see countByText). */
export const TEXT_TOKEN_CACHE_CHARS = 4_000;
/** At most this many texts, and TEXT_TOKEN_CACHE_TOTAL_CHARS characters, per estimator; cleared when full. */
export const TEXT_TOKEN_CACHE_SIZE = 10_000;
/** ~4 MB of text at most (two bytes a character). */
export const TEXT_TOKEN_CACHE_TOTAL_CHARS = 2_000_000;

const byText = new TextTokenMemo({ entries: TEXT_TOKEN_CACHE_SIZE, chars: TEXT_TOKEN_CACHE_TOTAL_CHARS });

/**
 * The count of a rendered event the per-event memo did not have, remembered by its text too: the same text under
 * another id is not tokenised again — a fork's copies (another session id), a tool output or message repeated in
 * the log, recall quoting repeats of a message from a large archive. The count is the estimator's for that exact
 * text, so a hit is exact.
 */
function countByText(text: string, estimator: TokenCountEstimator): number {
  if (text.length > TEXT_TOKEN_CACHE_CHARS) return estimator.estimate(text);
  return byText.get(estimator, text) ?? byText.set(estimator, text, estimator.estimate(text));
}

export function estimateEventsTokens(events: readonly SessionEvent[], estimator: TokenCountEstimator): number {
  let total = 0;
  for (const e of events) total += estimateEventTokens(e, estimator);
  return total;
}
