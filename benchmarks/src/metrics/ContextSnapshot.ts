import type { Message } from 'session-compaction';
import { formatMessage } from 'session-compaction/spi';
import type { RecordedEvent, RecordedProbe } from '../recorded/RecordedSession.js';

/** Whether one probe could still be answered from the context sent to the model. */
export interface ProbeOutcome {
  /**
   * Per evidence event (in the probe's order, blank ones left out): whether its whole content is in the
   * context, character for character (only the layout may differ: a quoted entry's continuation lines are
   * indented). Strict: a shortened excerpt or a snippet of the event does not count.
   */
  evidencePresent: { index: number; present: boolean }[];
  /** Every evidence event's content is in the context (all of `evidencePresent`). */
  evidenceVerbatim: boolean;
  /** The answer (or one of its `;`-separated alternatives) appears in the context, summaries included. */
  answerFound: boolean;
  /** evidenceVerbatim || answerFound: the headline retention. */
  retained: boolean;
}

const MONTH = '(january|february|march|april|may|june|july|august|september|october|november|december)';
/** `july 28 2023` (after punctuation is gone) and `28th july 2023`: the day-first form `28 july 2023` below. */
const MONTH_FIRST = new RegExp(`\\b${MONTH} (\\d{1,2})(?:st|nd|rd|th)?( \\d{4})?\\b`, 'g');
const ORDINAL_DAY = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th) (?:of )?${MONTH}\\b`, 'g');

/**
 * Lower-case words separated by single spaces, so that matching ignores case, punctuation and layout; dates
 * are put in one word order (`July 28, 2023`, `28th of July 2023` and `28 July 2023` all read
 * `28 july 2023`), since the same date written another way is the same information.
 */
export function normaliseForMatch(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .replace(ORDINAL_DAY, '$1 $2')
    .replace(MONTH_FIRST, (_, month: string, day: string, year: string | undefined) => `${day} ${month}${year ?? ''}`);
}

/**
 * The text with every run of white space or line terminators as one space: the recall block and the
 * summariser's transcripts indent the continuation lines of a quoted message, which changes its layout, not
 * its content.
 */
export function withoutLayout(text: string): string {
  // eslint-disable-next-line no-control-regex -- U+001C–U+001E are line terminators for the quoting (Python's splitlines)
  return text.replace(/[\s\u0085\u001c-\u001e]+/gu, ' ').trim();
}

/**
 * The context the model would see at one point of a replay (our active window, or a peer's trimmed list),
 * rendered with formatMessage — the same text the strategies count and summarise. Texts are built lazily:
 * most calls of a replay ask no probe.
 */
export class ContextSnapshot {
  private text: string | undefined;
  private normalised: string | undefined;
  private layoutFree: string | undefined;

  constructor(readonly messages: readonly Message[]) {}

  get fullText(): string {
    this.text ??= this.messages.map((m) => formatMessage(m)).join('\n');
    return this.text;
  }

  private get layoutFreeText(): string {
    this.layoutFree ??= withoutLayout(this.fullText);
    return this.layoutFree;
  }

  private get normalisedText(): string {
    this.normalised ??= ` ${normaliseForMatch(this.fullText)} `;
    return this.normalised;
  }

  /**
   * Probes with a `distractor` (LoCoMo's adversarial questions) have an abstention as answer, which is
   * never "in" a conversation: they are scored on their evidence only. Answers match on whole words.
   */
  evaluate(probe: RecordedProbe, events: readonly RecordedEvent[]): ProbeOutcome {
    const evidencePresent = probe.evidenceEventIndexes
      .map((index) => ({ index, content: events[index]?.content ?? '' }))
      .filter((e) => e.content.trim() !== '')
      .map(({ index, content }) => ({ index, present: this.layoutFreeText.includes(withoutLayout(content)) }));
    const evidenceVerbatim = evidencePresent.length > 0 && evidencePresent.every((e) => e.present);
    let answerFound = false;
    if (probe.distractor === undefined) {
      for (const alternative of probe.answer.split(';')) {
        const needle = normaliseForMatch(alternative);
        if (needle !== '' && this.normalisedText.includes(` ${needle} `)) {
          answerFound = true;
          break;
        }
      }
    }
    return { evidencePresent, evidenceVerbatim, answerFound, retained: evidenceVerbatim || answerFound };
  }
}
