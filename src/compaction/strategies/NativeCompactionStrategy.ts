import { InvalidArgumentError } from '../../errors.js';
import { defaultLogger, type Logger } from '../../logging.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import { mechanicalSummary } from '../../summarization/mechanicalSummary.js';
import { addUsage, emptyUsage } from '../../tokens/UsageRecord.js';
import { requireRequest, type CompactionRequest } from '../CompactionRequest.js';
import { CompactionResult } from '../CompactionResult.js';
import type { CompactionStrategy, StrategyPreview } from '../CompactionStrategy.js';
import { coveredIds } from '../coverage.js';
import {
  METADATA_NATIVE_COMPACTION,
  NATIVE_SUMMARY_METHOD,
  type NativeCompactionOutput,
  type NativeCompactionRecord,
  type NativeCompactor,
} from '../nativeCompaction.js';
import { priorSummaryTexts, SUMMARY_METADATA } from './summaryEvents.js';

/**
 * Where the text that every other provider reads (the summary event's own message) comes from:
 * - 'summarize' (default) — the fallback strategy's summariser, over the same range (one more model call per
 *   compaction; what you want when the session may move to another provider, or be read by a person);
 * - 'provider' — the readable summary the provider returned with its payload (Anthropic's block `content`),
 *   else (OpenAI's is encrypted) a mechanical summary of the range; no extra model call;
 * - 'mechanical' — a mechanical summary of the range (the opening of each event), no extra model call.
 */
export type PortableSummary = 'summarize' | 'provider' | 'mechanical';

/** Metadata key on a native summary pair: how its text (what other providers read) was written. */
export const METADATA_PORTABLE_SUMMARY_METHOD = 'portableSummaryMethod';

const PORTABLE_SUMMARIES: readonly PortableSummary[] = ['summarize', 'provider', 'mechanical'];

/** A summarising strategy: it writes a summary pair, and can say without a model call which range it would summarise. */
export type PreviewableStrategy = CompactionStrategy & { preview(request: CompactionRequest): Promise<StrategyPreview> };

export interface NativeCompactionStrategyOptions {
  /** Asks the provider to compact (`OpenAIResponsesCompactor`, `AnthropicCompactor`). */
  compactor: NativeCompactor;
  /**
   * The library's summarising strategy (e.g. `RecursiveSummarizationCompactionStrategy`): it chooses the range
   * (its cut rules: a call is never separated from its result, pinned events stay), writes the portable text
   * with `portableSummary: 'summarize'`, and is what runs when the provider's compaction fails.
   */
  fallback: PreviewableStrategy;
  /** Default 'summarize'. */
  portableSummary?: PortableSummary;
  /** Called when the provider's compaction failed and the fallback ran instead (its own failure is logged, not thrown). */
  onNativeFailure?: (request: CompactionRequest, error: unknown) => void;
  logger?: Logger;
}

/**
 * Asks the provider to compact the range the fallback strategy would summarise, and stores the provider's
 * opaque output (OpenAI's `compaction` item with `encrypted_content`, Anthropic's signed `compaction` block)
 * on the summary pair, tagged with the provider: the pair covers the range like any summary (coverage, revert,
 * erasure and redaction treat it as one), its text is a library summary of the same range (see
 * `PortableSummary`), and the converters of that provider send the payload back verbatim instead of the text.
 * When the provider's call fails (an HTTP error, a refusal, no payload), the fallback strategy compacts as it
 * would alone: nothing is lost and the session still compacts.
 */
export class NativeCompactionStrategy implements CompactionStrategy {
  readonly compactor: NativeCompactor;
  readonly fallback: PreviewableStrategy;
  readonly portableSummary: PortableSummary;
  private readonly onNativeFailure: ((request: CompactionRequest, error: unknown) => void) | undefined;
  private readonly logger: Logger;

  constructor(options: NativeCompactionStrategyOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    const { compactor, fallback } = options;
    if (compactor === null || compactor === undefined || typeof compactor.compact !== 'function') {
      throw new InvalidArgumentError('compactor must have a compact method');
    }
    if (typeof compactor.provider !== 'string' || compactor.provider === '') {
      throw new InvalidArgumentError('compactor.provider must not be null or empty');
    }
    if (fallback === null || fallback === undefined || typeof fallback.compact !== 'function') {
      throw new InvalidArgumentError('fallback must not be null');
    }
    if (typeof fallback.preview !== 'function') {
      throw new InvalidArgumentError('fallback must be a summarising strategy with a preview method');
    }
    const portable = options.portableSummary ?? 'summarize';
    if (!PORTABLE_SUMMARIES.includes(portable)) {
      throw new InvalidArgumentError(`portableSummary must be one of ${PORTABLE_SUMMARIES.join(', ')}`);
    }
    this.compactor = compactor;
    this.fallback = fallback;
    this.portableSummary = portable;
    this.onNativeFailure = options.onNativeFailure;
    this.logger = options.logger ?? defaultLogger();
  }

  /** The fallback's preview: the same range, no model call and no provider call. */
  preview(request: CompactionRequest): Promise<StrategyPreview> {
    return this.fallback.preview(requireRequest(request));
  }

  async compact(request: CompactionRequest): Promise<CompactionResult> {
    const { events } = requireRequest(request);
    const preview = await this.fallback.preview(request);
    const planned = preview.result;
    // Nothing to archive: neither the provider nor the summariser is called.
    if (planned.isNoop()) return CompactionResult.noop(events, planned.skipReason ?? 'nothing-to-archive');
    if (findSummaryPair(planned.compactedEvents, events) === null) return this.fallback.compact(request);
    const kept = new Set(planned.compactedEvents.map((e) => e.id));
    // Prior summaries the new one replaces: the provider compacts them with the range, as the summariser does.
    const superseded = events.filter((e) => e.isSynthetic() && !kept.has(e.id));
    const sources = (preview.summarizedEvents ?? planned.archivedEvents).map((e) => request.originalOf(e));
    let native: NativeCompactionOutput;
    let payload: string;
    try {
      native = await this.compactor.compact({
        sessionId: request.session.id,
        events: [...superseded, ...sources],
        instructions: request.instructions,
      });
      payload = requirePayload(native);
    } catch (error) {
      this.reportFailure(request, error);
      return this.fallback.compact(request);
    }
    const record: NativeCompactionRecord = {
      provider: this.compactor.provider,
      payload,
      ...((native.model ?? this.compactor.model) ? { model: (native.model ?? this.compactor.model)! } : {}),
    };
    const nativeUsage = emptyUsage();
    nativeUsage.summarizerCalls = 1;
    if (native.usage !== null) {
      nativeUsage.summarizerInputTokens = native.usage.promptTokens;
      nativeUsage.summarizerCachedInputTokens = native.usage.cachedPromptTokens ?? 0;
      nativeUsage.summarizerOutputTokens = native.usage.completionTokens;
    }
    const mechanical = () => mechanicalSummary(sources, priorSummaryTexts(superseded));
    if (this.portableSummary === 'summarize') {
      let summarized: CompactionResult;
      try {
        summarized = await this.fallback.compact(request);
      } catch (error) {
        // A summariser in 'throw' mode: the provider's compaction succeeded, so it stands (below) all the same.
        this.logger.warn('the summariser failed after the native compaction; a text written without a model is stored', {
          sessionId: request.session.id,
          error: error instanceof Error ? error.message : String(error),
        });
        summarized = CompactionResult.noop(events, 'summarization-failed');
      }
      const pair = summarized.isNoop() ? null : findSummaryPair(summarized.compactedEvents, events);
      if (pair !== null && sameIds(summarized.archivedEvents, planned.archivedEvents)) {
        return attach(summarized, pair, record, null, null).withUsage(addUsage(summarized.usage, nativeUsage));
      }
      if (!summarized.isNoop()) {
        // The summariser chose another range than its preview (it should not): its summary stands alone.
        this.logger.warn('the fallback compacted another range than it previewed; the native compaction is not stored', {
          sessionId: request.session.id,
        });
        return summarized.withUsage(addUsage(summarized.usage, nativeUsage));
      }
      // The summariser failed: the provider's compaction stands, with the best text there is without a model.
      const placeholder = findSummaryPair(planned.compactedEvents, events)!;
      const [text, method] = native.text !== null ? [native.text, 'provider'] : [mechanical(), 'mechanical'];
      return attach(planned, placeholder, record, text, method).withUsage(addUsage(summarized.usage, nativeUsage));
    }
    const [text, method] =
      this.portableSummary === 'provider' && native.text !== null ? [native.text, 'provider'] : [mechanical(), 'mechanical'];
    const pair = findSummaryPair(planned.compactedEvents, events)!;
    return attach(planned, pair, record, text, method).withUsage(nativeUsage);
  }

  private reportFailure(request: CompactionRequest, error: unknown): void {
    this.logger.warn('native compaction failed; the library summariser compacts instead', {
      sessionId: request.session.id,
      provider: this.compactor.provider,
      error: error instanceof Error ? error.message : String(error),
    });
    try {
      this.onNativeFailure?.(request, error);
    } catch (listenerError) {
      this.logger.warn('onNativeFailure threw; ignored', { error: String(listenerError) });
    }
  }
}

/** The payload as the JSON text to store; a missing or non-serialisable payload is a failed compaction. */
function requirePayload(output: NativeCompactionOutput): string {
  if (output === null || typeof output !== 'object' || output.payload === undefined || output.payload === null) {
    throw new Error('the provider returned no compaction');
  }
  const text = JSON.stringify(output.payload);
  if (typeof text !== 'string') throw new Error('the compaction payload is not JSON');
  return text;
}

/** Indexes of the new summary pair in `window` (a synthetic user prompt, then the synthetic summary), or null. */
function findSummaryPair(
  window: readonly SessionEvent[],
  before: readonly SessionEvent[],
): { shadow: number; summary: number } | null {
  const existing = new Set(before.map((e) => e.id));
  const summary = window.findIndex(
    (e) => e.isSynthetic() && e.messageType === 'assistant' && !existing.has(e.id) && coveredIds(e).length > 0,
  );
  if (summary < 1) return null;
  const shadow = window[summary - 1]!;
  return shadow.isSynthetic() && shadow.messageType === 'user' ? { shadow: summary - 1, summary } : null;
}

function sameIds(a: readonly SessionEvent[], b: readonly SessionEvent[]): boolean {
  if (a.length !== b.length) return false;
  const ids = new Set(a.map((e) => e.id));
  return b.every((e) => ids.has(e.id));
}

/** `result` with the native record on its summary pair (and `text` as the summary's text, when given). */
function attach(
  result: CompactionResult,
  pair: { shadow: number; summary: number },
  record: NativeCompactionRecord,
  text: string | null,
  textMethod: string | null,
): CompactionResult {
  const window = [...result.compactedEvents];
  const shadow = window[pair.shadow]!;
  const summary = window[pair.summary]!;
  const tag = {
    [SUMMARY_METADATA.method]: NATIVE_SUMMARY_METHOD,
    // How the text other providers read was written: the summariser's 'model' or 'stub', or 'provider', 'mechanical'.
    [METADATA_PORTABLE_SUMMARY_METHOD]: textMethod ?? summary.metadata[SUMMARY_METADATA.method] ?? null,
  };
  window[pair.shadow] = shadow.with({
    metadata: { ...shadow.metadata, ...tag, [METADATA_NATIVE_COMPACTION]: { provider: record.provider } },
  });
  window[pair.summary] = summary.with({
    ...(text === null ? {} : { message: { type: 'assistant', text } }),
    metadata: { ...summary.metadata, ...tag, [METADATA_NATIVE_COMPACTION]: { ...record } },
  });
  return new CompactionResult(window, result.archivedEvents, result.tokensEstimatedSaved, result.skipReason, result.usage);
}
