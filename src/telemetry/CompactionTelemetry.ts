import type { Span } from '@opentelemetry/api';
import { ATTR, SPAN } from './attributes.js';
import { inSpan, instruments } from './telemetry.js';

export type CompactionOutcome = 'committed' | 'rebased' | 'lost' | 'not-triggered' | 'nothing-to-archive' | 'failed';

/**
 * What one `compact` call reports: the span's attributes and the compaction metrics. Values that cost
 * something (token counts) are passed as functions and computed only while the span is recorded.
 */
export class CompactionTelemetry {
  private outcomeSet = false;

  constructor(
    readonly span: Span,
    private readonly strategy: string,
  ) {}

  get recording(): boolean {
    return this.span.isRecording();
  }

  windowRead(events: number, tokens: () => number): void {
    if (!this.recording) return;
    this.span.setAttributes({ [ATTR.EVENTS_BEFORE]: events, [ATTR.TOKENS_BEFORE]: tokens() });
  }

  triggered(fired: boolean): void {
    this.span.setAttribute(ATTR.TRIGGER_FIRED, fired);
    if (!fired) this.outcome('not-triggered');
  }

  /** The strategy archived nothing (or skipped on purpose): nothing is written. */
  nothingToArchive(reason: string): void {
    this.span.setAttribute(ATTR.SKIP_REASON, reason);
    this.outcome('nothing-to-archive');
  }

  /** A commit lost the version check (a rebase attempt included). */
  casConflict(): void {
    instruments().casConflicts.add(1, { [ATTR.STRATEGY]: this.strategy });
  }

  lost(): void {
    this.span.setAttribute(ATTR.CAS_OUTCOME, 'lost');
    this.outcome('lost');
  }

  committed(
    result: { archived: number; tokensSaved: number; eventsAfter: number; tokensAfter: () => number },
    rebased: boolean,
  ): void {
    instruments().tokensSaved.add(result.tokensSaved, { [ATTR.STRATEGY]: this.strategy });
    this.span.setAttribute(ATTR.CAS_OUTCOME, rebased ? 'rebased' : 'committed');
    if (this.recording) {
      this.span.setAttributes({
        [ATTR.ARCHIVED_COUNT]: result.archived,
        [ATTR.TOKENS_SAVED]: result.tokensSaved,
        [ATTR.EVENTS_AFTER]: result.eventsAfter,
        [ATTR.TOKENS_AFTER]: result.tokensAfter(),
      });
    }
    this.outcome(rebased ? 'rebased' : 'committed');
  }

  failed(): void {
    this.outcome('failed');
  }

  private outcome(outcome: CompactionOutcome): void {
    if (this.outcomeSet) return;
    this.outcomeSet = true;
    this.span.setAttribute(ATTR.OUTCOME, outcome);
    instruments().compactions.add(1, { [ATTR.OUTCOME]: outcome, [ATTR.STRATEGY]: this.strategy });
  }
}

/** The `session_compaction.compact` span around one compaction. */
export function traceCompaction<T>(
  sessionId: string,
  strategy: string,
  work: (telemetry: CompactionTelemetry) => Promise<T>,
): Promise<T> {
  return inSpan(SPAN.COMPACT, { [ATTR.CONVERSATION_ID]: sessionId, [ATTR.STRATEGY]: strategy }, (span) => {
    const telemetry = new CompactionTelemetry(span, strategy);
    return work(telemetry).catch((error: unknown) => {
      telemetry.failed();
      throw error;
    });
  });
}

/** A strategy's name for attributes: its class, or 'function' for a plain strategy function. */
export function strategyName(strategy: unknown): string {
  if (typeof strategy === 'function') return strategy.name !== '' ? strategy.name : 'function';
  const name = (strategy as { constructor?: { name?: string } } | null)?.constructor?.name;
  return name !== undefined && name !== '' && name !== 'Object' ? name : 'custom';
}
