import { stemmer } from 'stemmer';
import { ENGLISH_STOP_WORDS as STOP_WORDS } from '../filter/stopWords.js';
import { MAX_INDEXED_CHARACTERS } from '../repository/eventSearch.js';
import { formatEvent } from '../session/formatEvent.js';
import type { SessionEvent } from '../session/SessionEvent.js';

/**
 * Lower-cased, stop words dropped, Porter-stemmed ("roasted" and "roast" meet): the same processing for
 * indexed text and for queries.
 */
export function processSearchTerm(term: string): string | null {
  const lower = term.toLowerCase();
  if (lower === '' || STOP_WORDS.has(lower)) return null;
  let stem = STEMS.get(lower);
  if (stem === undefined) {
    // A conversation's vocabulary is small and repeats: stemming each distinct word once is most of indexing saved.
    if (STEMS.size >= MAX_STEMS) STEMS.clear();
    stem = stemmer(lower);
    STEMS.set(lower, stem);
  }
  return stem;
}

/**
 * The words of a text, split at whitespace and punctuation as minisearch's default tokenizer splits them
 * (the index replaced minisearch and keeps its scores; a leading separator yields one empty token, which
 * counts in a document's length there too).
 */
export function splitWords(text: string): string[] {
  return text.split(SPACE_OR_PUNCTUATION);
}

const SPACE_OR_PUNCTUATION = /[\n\r\p{Z}\p{P}]+/u;

const MAX_STEMS = 100_000;
const STEMS = new Map<string, string>();

/**
 * The text an event is found by: its rendering as the model sees it (tool calls and tool results
 * included, so an identifier that only appeared in a tool output can be recalled). Shadow prompts (the
 * synthetic user events that open a summary) say nothing about the conversation and are not indexed.
 */
export function searchableText(event: SessionEvent): string | null {
  if (!isSearchable(event)) return null;
  // The same bound as the stores' full-text indexes: search finds the same events on every backend.
  return formatEvent(event).slice(0, MAX_INDEXED_CHARACTERS);
}

/** Whether `searchableText(event)` is not null, without rendering the event (a check on the hot path of recall). */
export function isSearchable(event: SessionEvent): boolean {
  if (event.isSynthetic() && event.messageType === 'user') return false;
  const m = event.message;
  if (m.type === 'assistant' && (m.text === null || m.text.trim() === '') && (m.toolCalls?.length ?? 0) === 0) return false;
  return m.type === 'assistant' || m.type === 'tool' || m.text.trim() !== '';
}
