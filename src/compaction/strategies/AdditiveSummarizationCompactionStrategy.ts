import { InvalidArgumentError, requirePositiveInt, requireText } from '../../errors.js';
import { defaultLogger, type Logger } from '../../logging.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import { splitTurns } from '../../session/turns.js';
import type { ChatClient } from '../../summarization/ChatClient.js';
import { mechanicalSummary } from '../../summarization/mechanicalSummary.js';
import {
  buildSummaryPrompt,
  DEFAULT_CONSOLIDATION_SYSTEM_PROMPT,
  DEFAULT_SUMMARY_SHADOW_PROMPT,
  DEFAULT_SUMMARY_SYSTEM_PROMPT,
  summarySystemPrompt,
} from '../../summarization/prompts.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { requireRequest, type CompactionRequest } from '../CompactionRequest.js';
import { CompactionResult } from '../CompactionResult.js';
import type { CompactionStrategy, StrategyPreview } from '../CompactionStrategy.js';
import { formatEvent } from '../formatEvent.js';
import {
  PREVIEW_SUMMARY_PLACEHOLDER,
  priorSummaryTexts,
  renderedTokens,
  reportFailure,
  requestSummary,
  type SummaryCheck,
  requireChatClient,
  requireFailureMode,
  SUMMARY_METADATA,
  summaryPair,
  type SummarizationFailureListener,
  type SummaryFailureMode,
} from './summaryEvents.js';
import { originalIdOf } from './replaceInPlace.js';
import { partitionSynthetic } from './windowCut.js';

export interface AdditiveSummarizationCompactionStrategyOptions {
  chatClient: ChatClient;
  /** Whole turns kept verbatim; default 4. */
  keepTurns?: number;
  /** Token cap of the kept turns: the buffer degrades keepTurns, …, 1, 0 turns while it exceeds it. */
  maxKeptTokens?: number;
  /** When all summary pairs together exceed this, they are consolidated into one. */
  maxSummaryTokens: number;
  /** Output cap for one chunk summary; default max(64, floor(maxSummaryTokens / 4)). */
  maxChunkSummaryTokens?: number;
  /** The chunk summariser's task; the transcript rules are appended. Default DEFAULT_SUMMARY_SYSTEM_PROMPT. */
  systemPrompt?: string;
  /** The consolidation task. Default DEFAULT_CONSOLIDATION_SYSTEM_PROMPT. */
  consolidationPrompt?: string;
  shadowPrompt?: string;
  eventFormatter?: (event: SessionEvent) => string;
  /** Default 'skip'. */
  failureMode?: SummaryFailureMode;
  /** Checked before a summary is committed; a rejected summary is handled by `failureMode`. */
  qualityGate?: SummaryCheck;
  onSummarizationFailure?: SummarizationFailureListener;
  tokenCountEstimator?: TokenCountEstimator;
  logger?: Logger;
  now?: () => Date;
}

export const ADDITIVE_SUMMARIZATION_SOURCE = 'additive-summarization';

const STRATEGY = 'AdditiveSummarizationCompactionStrategy';

/**
 * Additive summaries (Lightspeed decision 2): each compaction summarises only the newly archived chunk into
 * a new synthetic pair placed after the earlier ones, which stay byte-identical. The kept buffer is the last
 * `keepTurns` whole turns, degrading toward 0 while it exceeds `maxKeptTokens` (decision 9). When the summary
 * pairs together exceed `maxSummaryTokens` they are consolidated into one (the recursive fallback).
 */
export class AdditiveSummarizationCompactionStrategy implements CompactionStrategy {
  static readonly DEFAULT_KEEP_TURNS = 4;

  readonly chatClient: ChatClient;
  readonly keepTurns: number;
  readonly maxKeptTokens: number | undefined;
  readonly maxSummaryTokens: number;
  readonly maxChunkSummaryTokens: number;
  readonly systemPrompt: string;
  readonly consolidationPrompt: string;
  readonly shadowPrompt: string;
  readonly failureMode: SummaryFailureMode;
  readonly qualityGate: SummaryCheck | undefined;
  readonly tokenCountEstimator: TokenCountEstimator;
  private readonly eventFormatter: (event: SessionEvent) => string;
  private readonly customFormatter: boolean;
  private readonly onSummarizationFailure: SummarizationFailureListener | undefined;
  private readonly logger: Logger;
  private readonly now: () => Date;

  constructor(options: AdditiveSummarizationCompactionStrategyOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('chatClient must not be null');
    this.chatClient = requireChatClient(options.chatClient);
    const keep = options.keepTurns ?? AdditiveSummarizationCompactionStrategy.DEFAULT_KEEP_TURNS;
    if (typeof keep !== 'number' || !Number.isInteger(keep) || keep < 0) throw new InvalidArgumentError('keepTurns must be >= 0');
    this.keepTurns = keep;
    this.maxKeptTokens =
      options.maxKeptTokens === undefined ? undefined : requirePositiveInt(options.maxKeptTokens, 'maxKeptTokens');
    this.maxSummaryTokens = requirePositiveInt(options.maxSummaryTokens, 'maxSummaryTokens');
    this.maxChunkSummaryTokens = requirePositiveInt(
      options.maxChunkSummaryTokens ?? Math.max(64, Math.floor(this.maxSummaryTokens / 4)),
      'maxChunkSummaryTokens',
    );
    this.systemPrompt = requireText(options.systemPrompt ?? DEFAULT_SUMMARY_SYSTEM_PROMPT, 'systemPrompt');
    this.consolidationPrompt = requireText(
      options.consolidationPrompt ?? DEFAULT_CONSOLIDATION_SYSTEM_PROMPT,
      'consolidationPrompt',
    );
    this.shadowPrompt = requireText(options.shadowPrompt ?? DEFAULT_SUMMARY_SHADOW_PROMPT, 'shadowPrompt');
    this.failureMode = requireFailureMode(options.failureMode);
    this.qualityGate = options.qualityGate;
    this.tokenCountEstimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
    this.customFormatter = options.eventFormatter !== undefined;
    this.eventFormatter = options.eventFormatter ?? formatEvent;
    this.onSummarizationFailure = options.onSummarizationFailure;
    this.logger = options.logger ?? defaultLogger();
    this.now = options.now ?? (() => new Date());
  }

  /** How many of the last turns stay verbatim: keepTurns, degraded while they exceed maxKeptTokens. */
  keptTurnCount(turns: readonly (readonly SessionEvent[])[]): number {
    let k = Math.min(this.keepTurns, turns.length);
    if (this.maxKeptTokens === undefined) return k;
    while (k > 0 && estimateEventsTokens(turns.slice(turns.length - k).flat(), this.tokenCountEstimator) > this.maxKeptTokens) {
      k--;
    }
    return k;
  }

  /** The chunk to summarise and the turns kept verbatim, or null when nothing would be archived. */
  private plan(events: readonly SessionEvent[]) {
    const { synthetic, real } = partitionSynthetic(events);
    const { preamble, turns } = splitTurns(real);
    const archivedTurns = turns.length - this.keptTurnCount(turns);
    // The preamble only ever leaves together with a turn.
    if (archivedTurns === 0) return null;
    return { synthetic, chunk: [...preamble, ...turns.slice(0, archivedTurns).flat()], kept: turns.slice(archivedTurns).flat() };
  }

  /** The chunk that would be summarised, with a placeholder pair instead of a model call (consolidation not previewed). */
  async preview(request: CompactionRequest): Promise<StrategyPreview> {
    const { events } = requireRequest(request);
    const plan = this.plan(events);
    if (plan === null)
      return { result: CompactionResult.noop(events, 'nothing-to-archive'), summarizedEvents: [], modelCalled: false };
    const now = this.now();
    const sourceTokens = renderedTokens(
      plan.chunk,
      this.tokenCountEstimator,
      this.customFormatter ? this.eventFormatter : undefined,
    );
    const pair = summaryPair(
      request.session.id,
      this.shadowPrompt,
      PREVIEW_SUMMARY_PLACEHOLDER,
      this.chunkMetadata(plan.chunk, PREVIEW_SUMMARY_PLACEHOLDER, 'preview', sourceTokens, now),
      now,
    );
    return {
      result: new CompactionResult([...plan.synthetic, ...pair, ...plan.kept], plan.chunk, sourceTokens),
      summarizedEvents: plan.chunk,
      modelCalled: false,
    };
  }

  async compact(request: CompactionRequest): Promise<CompactionResult> {
    const { events } = requireRequest(request);
    const plan = this.plan(events);
    // Nothing would be archived: no model call.
    if (plan === null) return CompactionResult.noop(events);
    const { synthetic, chunk, kept } = plan;

    const outcome = await requestSummary(
      this.chatClient,
      {
        system: summarySystemPrompt(this.systemPrompt),
        user: buildSummaryPrompt({ transcript: chunk.map(this.eventFormatter) }),
        maxTokens: this.maxChunkSummaryTokens,
      },
      { gate: this.qualityGate, archived: chunk },
    );
    let summary: string;
    let method: 'model' | 'stub';
    if (outcome.ok) {
      summary = outcome.text;
      method = 'model';
    } else {
      reportFailure(
        { request, error: outcome.error, mode: this.failureMode, strategy: STRATEGY },
        this.logger,
        this.onSummarizationFailure,
      );
      if (this.failureMode !== 'stub') return CompactionResult.noop(events, 'summarization-failed');
      summary = mechanicalSummary(chunk);
      method = 'stub';
    }

    const now = this.now();
    const sourceTokens = renderedTokens(chunk, this.tokenCountEstimator, this.customFormatter ? this.eventFormatter : undefined);
    const pair = summaryPair(
      request.session.id,
      this.shadowPrompt,
      summary,
      this.chunkMetadata(chunk, summary, method, sourceTokens, now),
      now,
    );
    const saved = sourceTokens;
    let summaries: SessionEvent[] = [...synthetic, ...pair];
    if (estimateEventsTokens(summaries, this.tokenCountEstimator) > this.maxSummaryTokens) {
      summaries = await this.consolidate(request, summaries, now);
    }
    return new CompactionResult([...summaries, ...kept], chunk, saved);
  }

  private chunkMetadata(
    covered: readonly SessionEvent[],
    summary: string,
    method: string,
    sourceTokens: number,
    now: Date,
  ): Record<string, unknown> {
    return {
      compactionSource: ADDITIVE_SUMMARIZATION_SOURCE,
      [SUMMARY_METADATA.method]: method,
      [SUMMARY_METADATA.firstEventId]: covered[0]!.id,
      [SUMMARY_METADATA.lastEventId]: covered[covered.length - 1]!.id,
      // A masked copy stands for its original, which is the event the ledger tracks.
      [SUMMARY_METADATA.eventIds]: covered.map(originalIdOf),
      [SUMMARY_METADATA.tokenCount]: this.tokenCountEstimator.estimate(summary),
      [SUMMARY_METADATA.sourceTokenCount]: sourceTokens,
      ...(method !== 'stub' && this.chatClient.model ? { [SUMMARY_METADATA.model]: this.chatClient.model } : {}),
      [SUMMARY_METADATA.createdAt]: now.toISOString(),
    };
  }

  /**
   * Merges every summary into one pair. The chunk summaries' own wording is lost (the archived events are
   * not); on failure the separate pairs are kept, since a stub would lose more than it saves.
   */
  private async consolidate(request: CompactionRequest, summaries: SessionEvent[], now: Date): Promise<SessionEvent[]> {
    const texts = priorSummaryTexts(summaries);
    const outcome = await requestSummary(this.chatClient, {
      system: summarySystemPrompt(this.consolidationPrompt),
      user: buildSummaryPrompt({ transcript: texts.map((text, i) => `Summary ${i + 1}: ${text}`) }),
      maxTokens: Math.max(1, Math.floor(this.maxSummaryTokens / 2)),
    });
    if (!outcome.ok) {
      reportFailure(
        { request, error: outcome.error, mode: this.failureMode, strategy: `${STRATEGY} (consolidation)` },
        this.logger,
        this.onSummarizationFailure,
      );
      return summaries;
    }
    const coveredIds: string[] = [];
    let sourceTokens = 0;
    for (const e of summaries) {
      if (e.messageType === 'user') continue;
      const ids = e.metadata[SUMMARY_METADATA.eventIds];
      if (Array.isArray(ids)) coveredIds.push(...ids.filter((id): id is string => typeof id === 'string'));
      const tokens = e.metadata[SUMMARY_METADATA.sourceTokenCount];
      if (typeof tokens === 'number') sourceTokens += tokens;
    }
    const metadata: Record<string, unknown> = {
      compactionSource: ADDITIVE_SUMMARIZATION_SOURCE,
      [SUMMARY_METADATA.method]: 'consolidated',
      [SUMMARY_METADATA.firstEventId]: coveredIds[0] ?? null,
      [SUMMARY_METADATA.lastEventId]: coveredIds[coveredIds.length - 1] ?? null,
      [SUMMARY_METADATA.eventIds]: coveredIds,
      [SUMMARY_METADATA.tokenCount]: this.tokenCountEstimator.estimate(outcome.text),
      [SUMMARY_METADATA.sourceTokenCount]: sourceTokens,
      consolidatedSummaries: texts.length,
      ...(this.chatClient.model ? { [SUMMARY_METADATA.model]: this.chatClient.model } : {}),
      [SUMMARY_METADATA.createdAt]: now.toISOString(),
    };
    this.logger.info('additive summaries consolidated into one', {
      sessionId: request.session.id,
      summaries: texts.length,
    });
    return summaryPair(request.session.id, this.shadowPrompt, outcome.text, metadata, now);
  }
}
