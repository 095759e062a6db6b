import { InvalidArgumentError } from '../../errors.js';
import type { Logger } from '../../logging.js';
import { Messages } from '../../session/Message.js';
import { SessionEvent } from '../../session/SessionEvent.js';
import type { ChatClient, ChatRequest, ChatUsage } from '../../summarization/ChatClient.js';
import { SummarizationError } from '../../summarization/SummarizationError.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import { formatEvent } from '../../session/formatEvent.js';
import type { CompactionRequest } from '../CompactionRequest.js';

/**
 * What a strategy does when the summariser fails (rejects, returns null or blank text):
 * - 'skip'  — nothing changes; the next compaction tries again (default);
 * - 'stub'  — a mechanical summary without a model replaces the archived events in the context;
 * - 'throw' — `compact` rejects with a SummarizationError; nothing changes.
 * In every mode the archived events stay in the log, readable with `EventFilter.all()`.
 */
export type SummaryFailureMode = 'skip' | 'stub' | 'throw';

export const SUMMARY_FAILURE_MODES: readonly SummaryFailureMode[] = Object.freeze(['skip', 'stub', 'throw']);

/** Called when a summary could not be written; `error` is the SummarizationError describing why. */
export type SummarizationFailureListener = (request: CompactionRequest, error: SummarizationError) => void;

/** Text of the placeholder summary a preview shows instead of calling the model. */
export const PREVIEW_SUMMARY_PLACEHOLDER = '[preview: the summary would go here]';

/** Metadata keys a summary pair carries besides `synthetic` and `compactionSource`. */
export const SUMMARY_METADATA = Object.freeze({
  /** 'model' | 'stub' | 'consolidated' */
  method: 'summaryMethod',
  firstEventId: 'coveredFirstEventId',
  lastEventId: 'coveredLastEventId',
  eventIds: 'coveredEventIds',
  /** Tokens of the summary text. */
  tokenCount: 'tokenCount',
  /** Tokens of the events the summary stands for. */
  sourceTokenCount: 'sourceTokenCount',
  model: 'model',
  createdAt: 'createdAt',
});

export function requireFailureMode(value: unknown): SummaryFailureMode {
  const mode = value ?? 'skip';
  if (!(SUMMARY_FAILURE_MODES as readonly unknown[]).includes(mode)) {
    throw new InvalidArgumentError(`failureMode must be one of ${SUMMARY_FAILURE_MODES.join(', ')}`);
  }
  return mode as SummaryFailureMode;
}

export function requireChatClient(value: unknown): ChatClient {
  if (value === null || value === undefined) throw new InvalidArgumentError('chatClient must not be null');
  if (typeof (value as ChatClient).call !== 'function') throw new InvalidArgumentError('chatClient must have a call method');
  return value as ChatClient;
}

/** Checks a summary before it is committed (e.g. SummaryQualityGate); a failed check is a failed summary. */
export interface SummaryCheck {
  check(summary: string, archivedEvents: readonly SessionEvent[]): { ok: boolean; reasons: string[] };
}

/** The summary text, or the reason there is none, with what the call consumed (null when unknown). */
export type SummaryAttempt =
  { ok: true; text: string; usage: ChatUsage | null } | { ok: false; error: SummarizationError; usage: ChatUsage | null };

/**
 * The summary text, or the reason there is none. A rejected call is a failed summary, not an exception.
 * Through `complete` when the client has it, so that the usage is this call's own.
 */
export async function requestSummary(
  client: ChatClient,
  request: ChatRequest,
  quality?: { gate: SummaryCheck | undefined; archived: readonly SessionEvent[] },
): Promise<SummaryAttempt> {
  let usage: ChatUsage | null = null;
  try {
    let text: string | null;
    if (typeof client.complete === 'function') ({ text, usage } = await client.complete(request));
    else text = await client.call(request);
    if (typeof text !== 'string' || text.trim() === '') {
      return { ok: false, error: new SummarizationError('summarizer returned no text', { kind: 'blank' }), usage };
    }
    const verdict = quality?.gate?.check(text.trim(), quality.archived);
    if (verdict !== undefined && !verdict.ok) {
      return {
        ok: false,
        error: new SummarizationError(`summary rejected by the quality gate: ${verdict.reasons.join('; ')}`, { kind: 'quality' }),
        usage,
      };
    }
    return { ok: true, text: text.trim(), usage };
  } catch (error) {
    if (error instanceof SummarizationError) return { ok: false, error, usage };
    const message = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      error: new SummarizationError(`summarizer failed: ${message}`, { kind: 'connection', cause: error }),
      usage,
    };
  }
}

/** Logs, notifies the listener (whose own failure is logged, not thrown), and rethrows in 'throw' mode. */
export function reportFailure(
  context: { request: CompactionRequest; error: SummarizationError; mode: SummaryFailureMode; strategy: string },
  logger: Logger,
  listener: SummarizationFailureListener | undefined,
): void {
  const { request, error, mode, strategy } = context;
  logger.warn('summarization failed; no events lost', {
    strategy,
    sessionId: request.session.id,
    failureMode: mode,
    kind: error.kind,
    error: error.message,
  });
  try {
    listener?.(request, error);
  } catch (listenerError) {
    logger.warn('onSummarizationFailure threw; ignored', { error: String(listenerError) });
  }
  if (mode === 'throw') throw error;
}

/** A shadow user prompt and the assistant summary: a synthetic pair, root, stamped with the same time. */
export function summaryPair(
  sessionId: string,
  shadowPrompt: string,
  summary: string,
  metadata: Record<string, unknown>,
  now: Date,
): [SessionEvent, SessionEvent] {
  const meta = { ...metadata, [SessionEvent.METADATA_SYNTHETIC]: true };
  return [
    SessionEvent.create({ sessionId, message: Messages.user(shadowPrompt), timestamp: now, metadata: meta, branch: null }),
    SessionEvent.create({ sessionId, message: Messages.assistant(summary), timestamp: now, metadata: meta, branch: null }),
  ];
}

/** Summary texts of synthetic events: every non-user synthetic event (shadow prompts excluded). */
export function priorSummaryTexts(synthetic: readonly SessionEvent[]): string[] {
  const texts: string[] = [];
  for (const e of synthetic) {
    if (e.messageType === 'user') continue;
    const text = e.text;
    if (text !== null && text.trim() !== '') texts.push(text);
  }
  return texts;
}

/**
 * Tokens of events as the strategy renders them: through the shared memo for the standard rendering, or
 * estimate(formatter(e)) for a custom one, so that what is counted is what is sent.
 */
export function renderedTokens(
  events: readonly SessionEvent[],
  estimator: TokenCountEstimator,
  formatter: ((event: SessionEvent) => string) | undefined,
): number {
  if (formatter === undefined || formatter === formatEvent) return estimateEventsTokens(events, estimator);
  let total = 0;
  for (const e of events) total += estimator.estimate(formatter(e));
  return total;
}
