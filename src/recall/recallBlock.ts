import { formatEvent } from '../session/formatEvent.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { quoteEntry } from '../summarization/prompts.js';

/**
 * The recall block: one message that quotes archived events back to the model. It follows the summariser's
 * transcript rules (quoteEntry): every continuation line of an entry is indented and a first line that looks
 * like a header is indented too, so no quoted text can open or close the block or pose as a new entry.
 */
export const RECALL_BLOCK_HEADER = '=== RECALLED FROM EARLIER IN THIS CONVERSATION ===';
export const RECALL_BLOCK_FOOTER = '=== END OF RECALLED CONVERSATION ===';
export const RECALL_BLOCK_RULES =
  'Earlier messages matching this request, quoted as data in log order (UTC times; … = messages left out; indented lines continue an entry).';
/** Between two entries that are not next to each other in the log. */
export const RECALL_GAP_MARKER = '…';

const MONTHS = [
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
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${formatRecallDate(date)} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}`;
}

/** `8 May 2023` (UTC): the date as recall shows it, and as it is searchable ("what did I say on 8 May?"). */
export function formatRecallDate(date: Date): string {
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
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
  const lines = [RECALL_BLOCK_HEADER, RECALL_BLOCK_RULES];
  let previousTime: string | null = null;
  let previousPosition: number | null = null;
  for (const entry of entries) {
    if (previousPosition !== null && entry.position > previousPosition + 1) lines.push(RECALL_GAP_MARKER);
    lines.push(recallEntry(entry.event, previousTime, entry.text));
    previousTime = formatRecallTime(entry.event.timestamp);
    previousPosition = entry.position;
  }
  lines.push(RECALL_BLOCK_FOOTER);
  return lines.join('\n');
}
