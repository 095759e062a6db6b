import { InvalidArgumentError, requirePositiveInt, requireText } from '../../errors.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import { splitTurns } from '../../session/turns.js';
import { mechanicalSummary } from '../../summarization/mechanicalSummary.js';
import { buildSummaryPrompt, DEFAULT_CONSOLIDATION_SYSTEM_PROMPT } from '../../summarization/prompts.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import { requireRequest, type CompactionRequest } from '../CompactionRequest.js';
import { CompactionResult } from '../CompactionResult.js';
import type { StrategyPreview } from '../CompactionStrategy.js';
import { originalIdOf } from './replaceInPlace.js';
import { PREVIEW_SUMMARY_PLACEHOLDER, priorSummaryTexts, SUMMARY_METADATA, summaryPair } from './summaryEvents.js';
import { SummarizingCompactionStrategy, type SummarizingStrategyOptions } from './SummarizingCompactionStrategy.js';
import { pinnedIds } from '../cutWithinTurn.js';
import { partitionSynthetic } from './windowCut.js';
import {
  CHECKPOINT_METADATA,
  checkpointsOf,
  compressionLevelFor,
  nextOrdinal,
  oldestToMerge,
  requireCompressionLevels,
  type CompressionLevel,
} from './checkpoints.js';

export interface AdditiveSummarizationCompactionStrategyOptions extends SummarizingStrategyOptions {
  /** Whole turns kept verbatim; default 4. */
  keepTurns?: number;
  /** Token cap of the kept turns: the buffer degrades keepTurns, …, 1, 0 turns while it exceeds it. */
  maxKeptTokens?: number;
  /** When all summary pairs together exceed this, they are consolidated into one. */
  maxSummaryTokens: number;
  /** Output cap for one chunk summary; default max(64, floor(maxSummaryTokens / 4)). */
  maxChunkSummaryTokens?: number;
  /** The consolidation task. Default DEFAULT_CONSOLIDATION_SYSTEM_PROMPT. */
  consolidationPrompt?: string;
  /**
   * The compression level of a chunk summary by the chunk's size: instructions and target length per
   * level. Default DEFAULT_COMPRESSION_LEVELS (≤ 2k tokens level 1 detailed, ≤ 8k level 2, larger level 3 terse).
   */
  compressionLevels?: readonly CompressionLevel[];
  /**
   * When the summaries exceed maxSummaryTokens: 'oldest-first' (default) merges the oldest checkpoints — as
   * few as bring the total under the cap — into one checkpoint a level higher, and leaves the newer ones as
   * they are (byte-identical, so a cached prefix survives); 'all' merges every summary into one.
   */
  merge?: 'oldest-first' | 'all';
}

export const ADDITIVE_SUMMARIZATION_SOURCE = 'additive-summarization';

/**
 * Additive summaries: each compaction summarises only the newly archived chunk into
 * a new synthetic pair placed after the earlier ones, which stay byte-identical. The kept buffer is the last
 * `keepTurns` whole turns, degrading toward 0 while it exceeds `maxKeptTokens`, so a few huge turns cannot keep the window over budget. When the summary
 * pairs together exceed `maxSummaryTokens` they are consolidated into one (the recursive fallback).
 */
export class AdditiveSummarizationCompactionStrategy extends SummarizingCompactionStrategy {
  static readonly DEFAULT_KEEP_TURNS = 4;

  readonly keepTurns: number;
  readonly maxKeptTokens: number | undefined;
  readonly maxSummaryTokens: number;
  readonly maxChunkSummaryTokens: number;
  readonly consolidationPrompt: string;
  readonly compressionLevels: readonly Readonly<CompressionLevel>[];
  readonly merge: 'oldest-first' | 'all';

  constructor(options: AdditiveSummarizationCompactionStrategyOptions) {
    super(options);
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
    this.consolidationPrompt = requireText(
      options.consolidationPrompt ?? DEFAULT_CONSOLIDATION_SYSTEM_PROMPT,
      'consolidationPrompt',
    );
    this.compressionLevels = requireCompressionLevels(options.compressionLevels);
    const merge = options.merge ?? 'oldest-first';
    if (merge !== 'oldest-first' && merge !== 'all') throw new InvalidArgumentError("merge must be 'oldest-first' or 'all'");
    this.merge = merge;
  }

  /** The level, task and output cap of a chunk summary of `sourceTokens`. */
  private levelFor(sourceTokens: number): { level: number; systemPrompt: string; maxTokens: number } {
    const l = compressionLevelFor(this.compressionLevels, sourceTokens);
    const instructions = l.instructions?.trim() ?? '';
    return {
      level: l.level,
      systemPrompt: instructions === '' ? this.systemPrompt : `${this.systemPrompt.trimEnd()}\n\n${instructions}`,
      maxTokens: Math.max(1, Math.floor(this.maxChunkSummaryTokens * (l.lengthShare ?? 1))),
    };
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
    const pinned = pinnedIds(real);
    const leaving = [...preamble, ...turns.slice(0, archivedTurns).flat()];
    const chunk = leaving.filter((e) => !pinned.has(e.id));
    if (chunk.length === 0) return null;
    // Pinned events are never summarised away: they stay, before the kept turns.
    const heldBack = leaving.filter((e) => pinned.has(e.id));
    return { synthetic, chunk, kept: [...heldBack, ...turns.slice(archivedTurns).flat()] };
  }

  /** The chunk that would be summarised, with a placeholder pair instead of a model call (consolidation not previewed). */
  async preview(request: CompactionRequest): Promise<StrategyPreview> {
    const { events } = requireRequest(request);
    const plan = this.plan(events);
    if (plan === null)
      return { result: CompactionResult.noop(events, 'nothing-to-archive'), summarizedEvents: [], modelCalled: false };
    const now = this.now();
    const sourceTokens = this.renderedTokens(plan.chunk);
    const checkpoint = { level: this.levelFor(sourceTokens).level, ordinal: nextOrdinal(checkpointsOf(plan.synthetic)) };
    const pair = summaryPair(
      request.session.id,
      this.shadowPrompt,
      PREVIEW_SUMMARY_PLACEHOLDER,
      this.chunkMetadata(plan.chunk, PREVIEW_SUMMARY_PLACEHOLDER, 'preview', sourceTokens, now, checkpoint),
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

    const sources = this.sources(request, chunk);
    const sourceTokens = this.renderedTokens(chunk);
    const level = this.levelFor(sourceTokens);
    const outcome = await this.summarize(
      request,
      {
        user: buildSummaryPrompt({ transcript: sources.map(this.eventFormatter) }),
        maxTokens: level.maxTokens,
        systemPrompt: level.systemPrompt,
      },
      sources,
      () => mechanicalSummary(sources),
    );
    if (outcome === null) return this.withSummarizerUsage(request, CompactionResult.noop(events, 'summarization-failed'));
    const { summary, method } = outcome;

    const now = this.now();
    const checkpoint = { level: level.level, ordinal: nextOrdinal(checkpointsOf(synthetic)) };
    const pair = summaryPair(
      request.session.id,
      this.shadowPrompt,
      summary,
      this.chunkMetadata(chunk, summary, method, sourceTokens, now, checkpoint),
      now,
    );
    const saved = sourceTokens;
    let summaries: SessionEvent[] = [...synthetic, ...pair];
    if (estimateEventsTokens(summaries, this.tokenCountEstimator) > this.maxSummaryTokens) {
      summaries = await this.consolidate(request, summaries, now);
    }
    return this.withSummarizerUsage(request, new CompactionResult([...summaries, ...kept], chunk, saved));
  }

  private chunkMetadata(
    covered: readonly SessionEvent[],
    summary: string,
    method: string,
    sourceTokens: number,
    now: Date,
    checkpoint: { level: number; ordinal: number },
  ): Record<string, unknown> {
    return {
      [CHECKPOINT_METADATA.level]: checkpoint.level,
      [CHECKPOINT_METADATA.ordinal]: checkpoint.ordinal,
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
   * Merges the oldest checkpoints (all of them with merge 'all') into one pair a level above the highest it
   * merges, placed first; the newer checkpoints stay byte-identical. The merged summaries' own wording is lost
   * (the archived events are not); on failure the separate pairs are kept, since a stub would lose more than
   * it saves.
   */
  private async consolidate(request: CompactionRequest, all: SessionEvent[], now: Date): Promise<SessionEvent[]> {
    const checkpoints = checkpointsOf(all);
    const mergeCap = Math.max(1, Math.floor(this.maxSummaryTokens / 2));
    const cost = (events: readonly SessionEvent[]) => estimateEventsTokens(events, this.tokenCountEstimator);
    const plan = oldestToMerge(checkpoints.slice(0, this.merge === 'all' ? checkpoints.length : undefined), cost, {
      shadowTokens: cost(summaryPair(request.session.id, this.shadowPrompt, '-', {}, now).slice(0, 1)),
      mergeCap,
      // 'all': no number of checkpoints short of all of them will do.
      maxTokens: this.merge === 'all' ? 0 : this.maxSummaryTokens,
    });
    const k = plan.count;
    const merging = checkpoints.slice(0, k);
    const summaries = merging.flatMap((c) => c.events);
    const kept = checkpoints.slice(k).flatMap((c) => c.events);
    const texts = priorSummaryTexts(summaries);
    // On failure the separate pairs are kept whatever the mode: a stub would lose more than it saves.
    const outcome = await this.summarize(
      request,
      {
        systemPrompt: this.consolidationPrompt,
        user: buildSummaryPrompt({ transcript: texts.map((text, i) => `Summary ${i + 1}: ${text}`) }),
        maxTokens: this.merge === 'all' ? mergeCap : plan.maxTokens,
      },
      summaries,
      null,
    );
    if (outcome === null) return all;
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
      [SUMMARY_METADATA.tokenCount]: this.tokenCountEstimator.estimate(outcome.summary),
      [SUMMARY_METADATA.sourceTokenCount]: sourceTokens,
      consolidatedSummaries: texts.length,
      [CHECKPOINT_METADATA.level]: Math.max(...merging.map((c) => c.level)) + 1,
      [CHECKPOINT_METADATA.ordinal]: Math.max(...merging.map((c) => c.ordinal)),
      [CHECKPOINT_METADATA.merged]: merging.length,
      ...(this.chatClient.model ? { [SUMMARY_METADATA.model]: this.chatClient.model } : {}),
      [SUMMARY_METADATA.createdAt]: now.toISOString(),
    };
    this.logger.info('oldest additive summaries merged into one checkpoint', {
      sessionId: request.session.id,
      merged: merging.length,
      kept: checkpoints.length - merging.length,
    });
    return [...summaryPair(request.session.id, this.shadowPrompt, outcome.summary, metadata, now), ...kept];
  }
}
