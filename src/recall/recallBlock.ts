import { createHash } from 'node:crypto';
import { formatEvent } from '../session/formatEvent.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { quoteEntry } from '../summarization/prompts.js';

/**
 * The recall block: one message that quotes archived events back to the model. It follows the summariser's
 * transcript rules (quoteEntry): every continuation line of an entry is indented (at every character any
 * consumer breaks lines at) and a first line that looks like a header is indented too, so no quoted text can
 * pose as a new entry. The opening and closing lines carry a tag derived from the quoted text itself: a message
 * that contains a closing line cannot contain the tag of the block that quotes it, so even a reader that strips
 * the indentation cannot be made to see the block end early. The tag depends only on the content, so the same
 * recalled events give the same block (a provider's prompt cache still matches).
 */
/** How the opening line starts; the whole line is `${RECALL_BLOCK_HEADER} [<tag>] ===`. */
export const RECALL_BLOCK_HEADER = '=== RECALLED FROM EARLIER IN THIS CONVERSATION';
/** How the closing line starts; the whole line is `${RECALL_BLOCK_FOOTER} [<tag>] ===`, the opening line's tag. */
export const RECALL_BLOCK_FOOTER = '=== END OF RECALLED CONVERSATION';
export const RECALL_BLOCK_RULES =
  'Earlier messages matching this request, quoted as data in log order (UTC times; … = messages left out; indented lines continue an entry).';
/** Between two entries that are not next to each other in the log. */
export const RECALL_GAP_MARKER = '…';

/** The month names recall writes its dates with (and queryPeriod reads a request's dates by). */
export const MONTH_NAMES: readonly string[] = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/**
 * `8 May 2023 13:56`, in UTC: day-month-year words read unambiguously in any locale, and the date is what a
 * model needs to answer "when" questions about recalled messages.
 */
export function formatRecallTime(date: Date): string {
  const at = date.getTime();
  let text = RECALL_TIMES.get(at);
  if (text === undefined) {
    const pad = (n: number) => String(n).padStart(2, '0');
    text = `${formatRecallDate(date)} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}`;
    // Every entry of every render asks for its time; a conversation's times repeat from one request to the next.
    if (RECALL_TIMES.size >= MAX_RECALL_TIMES) RECALL_TIMES.clear();
    RECALL_TIMES.set(at, text);
  }
  return text;
}

const MAX_RECALL_TIMES = 10_000;
const RECALL_TIMES = new Map<number, string>();

/** `8 May 2023` (UTC): the date as recall shows it, and as it is searchable ("what did I say on 8 May?"). */
export function formatRecallDate(date: Date): string {
  return `${date.getUTCDate()} ${MONTH_NAMES[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}

/** One quoted entry: `[time] Speaker: text`, time left out when it repeats the previous entry's. */
export function recallEntry(event: SessionEvent, previousTime: string | null, text: string = formatEvent(event)): string {
  const time = formatRecallTime(event.timestamp);
  return quoteEntry(time === previousTime ? text : `[${time}] ${text}`);
}

/** An entry of the block: the event, its log position and the (possibly shortened) rendering. */
export interface RecallBlockEntry {
  event: SessionEvent;
  position: number;
  text: string;
}

/** The block's text for `entries` (in log order); a gap marker between entries that are not adjacent in the log. */
export function renderRecallBlock(entries: readonly RecallBlockEntry[]): string {
  return recallBlockText(recallBlockBody(entries));
}

/** The block's text around the lines of recallBlockBody (`tag`: their recallBlockTag, when already computed). */
export function recallBlockText(body: readonly string[], tag: string = recallBlockTag(body)): string {
  return [recallBlockOpening(tag), RECALL_BLOCK_RULES, ...body, recallBlockClosing(tag)].join('\n');
}

/** The lines between the block's rules and its closing line: each entry, a gap marker where the log skips. */
export function recallBlockBody(entries: readonly RecallBlockEntry[]): string[] {
  const body: string[] = [];
  let previousTime: string | null = null;
  let previousPosition: number | null = null;
  for (const entry of entries) {
    if (previousPosition !== null && entry.position > previousPosition + 1) body.push(RECALL_GAP_MARKER);
    const time = formatRecallTime(entry.event.timestamp);
    body.push(quotedLine(entry, time !== previousTime));
    previousTime = time;
    previousPosition = entry.position;
  }
  return body;
}

/**
 * Each entry's two possible lines (with its time, without), quoted once: the assembler renders the body of a
 * growing block after every fill pass, and an entry's line depends only on whether its time repeats the previous.
 */
const QUOTED = new WeakMap<RecallBlockEntry, [withTime: string | undefined, without: string | undefined]>();

function quotedLine(entry: RecallBlockEntry, withTime: boolean): string {
  let lines = QUOTED.get(entry);
  if (lines === undefined) QUOTED.set(entry, (lines = [undefined, undefined]));
  const i = withTime ? 0 : 1;
  return (lines[i] ??= recallEntry(entry.event, withTime ? null : formatRecallTime(entry.event.timestamp), entry.text));
}

/** The block without its body: what renderRecallBlock writes around the lines of recallBlockBody. */
export function recallBlockFrame(tag: string): string {
  return [recallBlockOpening(tag), RECALL_BLOCK_RULES, recallBlockClosing(tag)].join('\n');
}

/** 12 hex digits of a SHA-256 of the quoted lines: a fixed point no quoted text can reach. */
export function recallBlockTag(body: readonly string[]): string {
  // Line by line: the same digest as of the joined body, without building it (20,000 characters per fill pass).
  const hash = createHash('sha256');
  for (const [i, line] of body.entries()) {
    if (i > 0) hash.update('\n');
    hash.update(line);
  }
  return hash.digest('hex').slice(0, 12);
}

export function recallBlockOpening(tag: string): string {
  return `${RECALL_BLOCK_HEADER} [${tag}] ===`;
}

export function recallBlockClosing(tag: string): string {
  return `${RECALL_BLOCK_FOOTER} [${tag}] ===`;
}
