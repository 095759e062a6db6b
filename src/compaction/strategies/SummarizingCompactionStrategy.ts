import { InvalidArgumentError, requireText } from '../../errors.js';
import { defaultLogger, type Logger } from '../../logging.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import type { ChatClient } from '../../summarization/ChatClient.js';
import {
  DEFAULT_SUMMARY_SHADOW_PROMPT,
  DEFAULT_SUMMARY_SYSTEM_PROMPT,
  summarySystemPrompt,
} from '../../summarization/prompts.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import type { CompactionRequest } from '../CompactionRequest.js';
import type { CompactionResult } from '../CompactionResult.js';
import { addUsage, emptyUsage, type UsageRecord } from '../../tokens/UsageRecord.js';
import type { ChatRequest } from '../../summarization/ChatClient.js';
import type { SummaryAttempt } from './summaryEvents.js';
import type { CompactionStrategy, StrategyPreview } from '../CompactionStrategy.js';
import { formatEvent } from '../../session/formatEvent.js';
import { traceSummarizerCall } from '../../telemetry/traceSummarizerCall.js';
import {
  renderedTokens,
  reportFailure,
  requestSummary,
  requireChatClient,
  requireFailureMode,
  type SummarizationFailureListener,
  type SummaryCheck,
  type SummaryFailureMode,
} from './summaryEvents.js';

/** Options every summarising strategy takes. */
export interface SummarizingStrategyOptions {
  chatClient: ChatClient;
  /** The summariser's task; the transcript rules are appended to it. Default DEFAULT_SUMMARY_SYSTEM_PROMPT. */
  systemPrompt?: string;
  /** Text of the synthetic user event opening a summary; default DEFAULT_SUMMARY_SHADOW_PROMPT. */
  shadowPrompt?: string;
  /** Renders events for the prompt and for counting; default formatEvent. */
  eventFormatter?: (event: SessionEvent) => string;
  onSummarizationFailure?: SummarizationFailureListener;
  tokenCountEstimator?: TokenCountEstimator;
  /** Default 'skip'. */
  failureMode?: SummaryFailureMode;
  /** Checked before a summary is committed; a rejected summary is handled by `failureMode`. */
  qualityGate?: SummaryCheck;
  /**
   * What the summariser reads for a masked copy in the window: 'originals' (default) — the original event,
   * when the request knows it, so a summary after masking still carries the full tool output; 'window' —
   * the excerpt as it stands in the window.
   */
  summarizeFrom?: 'originals' | 'window';
  logger?: Logger;
  now?: () => Date;
}

/** The system prompt with the instructions `beforeCompaction` hooks gave for this summary. */
function withInstructions(system: string, instructions: readonly string[]): string {
  if (instructions.length === 0) return system;
  return `${system}\n\nAdditional instructions for this summary:\n${instructions.map((i) => `- ${i}`).join('\n')}`;
}

/** A summary to commit: from the model, or a mechanical stub after a failure in 'stub' mode. */
export interface SummaryOutcome {
  summary: string;
  method: 'model' | 'stub';
}

/**
 * What the recursive and additive strategies share: validated settings, the rendering used for prompts and
 * counts, and one path from a model call to a summary — quality gate, failure report, and the failure mode.
 */
export abstract class SummarizingCompactionStrategy implements CompactionStrategy {
  readonly chatClient: ChatClient;
  readonly systemPrompt: string;
  readonly shadowPrompt: string;
  readonly failureMode: SummaryFailureMode;
  readonly qualityGate: SummaryCheck | undefined;
  readonly tokenCountEstimator: TokenCountEstimator;
  readonly summarizeFrom: 'originals' | 'window';
  protected readonly eventFormatter: (event: SessionEvent) => string;
  protected readonly customFormatter: boolean;
  protected readonly onSummarizationFailure: SummarizationFailureListener | undefined;
  protected readonly logger: Logger;
  protected readonly now: () => Date;
  /** What summarising consumed per compact() call, until its result is returned. */
  private readonly usageByRequest = new WeakMap<CompactionRequest, UsageRecord>();

  protected constructor(options: SummarizingStrategyOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('chatClient must not be null');
    this.chatClient = requireChatClient(options.chatClient);
    this.systemPrompt = requireText(options.systemPrompt ?? DEFAULT_SUMMARY_SYSTEM_PROMPT, 'systemPrompt');
    this.shadowPrompt = requireText(options.shadowPrompt ?? DEFAULT_SUMMARY_SHADOW_PROMPT, 'shadowPrompt');
    this.failureMode = requireFailureMode(options.failureMode);
    this.qualityGate = options.qualityGate;
    this.tokenCountEstimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
    const from = options.summarizeFrom ?? 'originals';
    if (from !== 'originals' && from !== 'window')
      throw new InvalidArgumentError("summarizeFrom must be 'originals' or 'window'");
    this.summarizeFrom = from;
    this.customFormatter = options.eventFormatter !== undefined;
    this.eventFormatter = options.eventFormatter ?? formatEvent;
    this.onSummarizationFailure = options.onSummarizationFailure;
    this.logger = options.logger ?? defaultLogger();
    this.now = options.now ?? (() => new Date());
  }

  abstract compact(request: CompactionRequest): Promise<CompactionResult>;
  abstract preview(request: CompactionRequest): Promise<StrategyPreview>;

  /** What the summariser reads for `events`: their originals (see `summarizeFrom`), in order. */
  protected sources(request: CompactionRequest, events: readonly SessionEvent[]): SessionEvent[] {
    return this.summarizeFrom === 'window' ? [...events] : events.map((e) => request.originalOf(e));
  }

  /** Tokens of events as this strategy renders them, so that what is counted is what is sent. */
  protected renderedTokens(events: readonly SessionEvent[]): number {
    return renderedTokens(events, this.tokenCountEstimator, this.customFormatter ? this.eventFormatter : undefined);
  }

  /**
   * Asks the model for a summary of `archived`. On failure (rejection, blank text, quality gate) it reports,
   * then: 'throw' rethrows, 'stub' returns `stub()`, 'skip' returns null — the caller then changes nothing.
   */
  protected async summarize(
    request: CompactionRequest,
    prompt: { user: string; maxTokens?: number; systemPrompt?: string },
    archived: readonly SessionEvent[],
    stub: (() => string) | null,
  ): Promise<SummaryOutcome | null> {
    const chatRequest: ChatRequest = {
      system: withInstructions(summarySystemPrompt(prompt.systemPrompt ?? this.systemPrompt), request.instructions),
      user: prompt.user,
      ...(prompt.maxTokens !== undefined ? { maxTokens: prompt.maxTokens } : {}),
    };
    const outcome = await traceSummarizerCall(
      {
        sessionId: request.session.id,
        model: this.chatClient.model,
        strategy: this.constructor.name,
        failureMode: this.failureMode,
        system: chatRequest.system ?? '',
        user: chatRequest.user,
        ...(chatRequest.maxTokens !== undefined ? { maxTokens: chatRequest.maxTokens } : {}),
      },
      () => requestSummary(this.chatClient, chatRequest, { gate: this.qualityGate, archived }),
      (o) => ({
        text: o.ok ? o.text : null,
        failureKind: o.ok ? null : o.error.kind,
        usage: o.usage === null ? null : { input: o.usage.promptTokens, output: o.usage.completionTokens },
      }),
      (text) => this.tokenCountEstimator.estimate(text),
    );
    this.recordUsage(request, outcome);
    if (outcome.ok) return { summary: outcome.text, method: 'model' };
    reportFailure(
      { request, error: outcome.error, mode: this.failureMode, strategy: this.constructor.name },
      this.logger,
      this.onSummarizationFailure,
    );
    return this.failureMode === 'stub' && stub !== null ? { summary: stub(), method: 'stub' } : null;
  }

  /**
   * One more summariser call for this compaction, with the tokens the client reported for it. A client that
   * reports none (no `complete`, or an endpoint without usage) adds the call only: its tokens are unknown,
   * and guessing them would put a made-up cost on the session.
   */
  private recordUsage(request: CompactionRequest, outcome: SummaryAttempt): void {
    const call = emptyUsage();
    call.summarizerCalls = 1;
    if (outcome.usage !== null) {
      call.summarizerInputTokens = outcome.usage.promptTokens;
      call.summarizerCachedInputTokens = outcome.usage.cachedPromptTokens ?? 0;
      call.summarizerOutputTokens = outcome.usage.completionTokens;
    }
    this.usageByRequest.set(request, addUsage(this.usageByRequest.get(request), call));
  }

  /** `result` carrying what summarising consumed for `request` (every call of this compaction). */
  protected withSummarizerUsage(request: CompactionRequest, result: CompactionResult): CompactionResult {
    const usage = this.usageByRequest.get(request);
    if (usage === undefined) return result;
    this.usageByRequest.delete(request);
    return result.withUsage(addUsage(result.usage, usage));
  }
}
