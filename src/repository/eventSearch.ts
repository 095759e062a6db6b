import { InvalidArgumentError } from '../errors.js';
import { ENGLISH_STOP_WORDS } from '../filter/stopWords.js';
import type { EventSearchOptions } from './SearchableRepository.js';

export const DEFAULT_SEARCH_LIMIT = 20;
/** Words of a query beyond this many are ignored: each one widens the index scan. */
export const MAX_SEARCH_TERMS = 32;
/** A query is cut here before parsing, so a pasted document cannot make one search arbitrarily expensive. */
export const MAX_SEARCH_CHARACTERS = 4096;
/**
 * How much of an event's searchable text (its text, then the string values of its data: tool-call names and
 * arguments, tool results, reasoning) the full-text indexes hold, in characters: every backend and the
 * in-process retriever index this prefix and store the whole event. PostgreSQL refuses a tsvector over
 * 1 MB, which a 600 KB tool result of identifiers already exceeds; 100,000 characters of any text stay far
 * below it. Words after the prefix are not found by search (the event itself reads back whole).
 */
export const MAX_INDEXED_CHARACTERS = 100_000;

/** `EventSearchOptions` with defaults applied and every field checked. */
export interface ResolvedEventSearch {
  limit: number;
  scope: 'session' | 'user';
  userId: string | undefined;
  includeActive: boolean;
  branch: string | null;
}

export function resolveEventSearchOptions(options: EventSearchOptions | undefined | null): ResolvedEventSearch {
  const o = options ?? {};
  const limit = o.limit ?? DEFAULT_SEARCH_LIMIT;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit <= 0) {
    throw new InvalidArgumentError('limit must be a positive integer');
  }
  const scope = o.scope ?? 'session';
  if (scope !== 'session' && scope !== 'user') throw new InvalidArgumentError("scope must be 'session' or 'user'");
  const userId = o.userId ?? undefined;
  if (userId !== undefined && (typeof userId !== 'string' || userId.trim() === '')) {
    throw new InvalidArgumentError('userId must not be empty');
  }
  if (scope === 'user' && userId === undefined) throw new InvalidArgumentError("userId is required for scope 'user'");
  const branch = o.branch ?? null;
  if (branch !== null && typeof branch !== 'string') throw new InvalidArgumentError('branch must be a string or null');
  return { limit, scope, userId, includeActive: o.includeActive === true, branch: branch === '' ? null : branch };
}

/** Letters, digits and combining marks: what SQLite's unicode61 tokenizer keeps as word characters. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * The distinct lower-cased words of a query, at most MAX_SEARCH_TERMS. Everything else — quotes, operators,
 * wildcards, parentheses, column filters — is a separator, so no query can carry search syntax. With
 * `dropStopWords`, English stop words ("what", "did", "the") go unless nothing else is left: they match most
 * events, so they cost time while hardly changing a BM25 order.
 */
export function searchTerms(query: string, dropStopWords = false): string[] {
  const terms = new Set<string>();
  for (const match of query.slice(0, MAX_SEARCH_CHARACTERS).toLowerCase().matchAll(WORD)) {
    terms.add(match[0]);
    if (terms.size === MAX_SEARCH_TERMS) break;
  }
  const all = [...terms];
  if (!dropStopWords) return all;
  const topical = all.filter((t) => !ENGLISH_STOP_WORDS.has(t));
  return topical.length > 0 ? topical : all;
}

/**
 * The first MAX_SEARCH_TERMS whitespace-separated words with control characters and unpaired surrogates
 * blanked (PostgreSQL rejects NUL, and a lone surrogate cannot be encoded), for a parser that keeps
 * e-mail addresses, URLs and hyphenated words together.
 */
export function searchWords(query: string): string {
  return query
    .slice(0, MAX_SEARCH_CHARACTERS)
    .replace(/[\p{Cc}\p{Cs}]/gu, ' ')
    .split(/\s+/)
    .filter((w) => w !== '')
    .slice(0, MAX_SEARCH_TERMS)
    .join(' ');
}
