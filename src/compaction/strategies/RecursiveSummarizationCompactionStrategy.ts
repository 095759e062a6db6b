import { InvalidArgumentError, requirePositiveInt, requireText } from '../../errors.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import { mechanicalSummary } from '../../summarization/mechanicalSummary.js';
import {
  buildSummaryPrompt,
  DEFAULT_SUMMARY_SHADOW_PROMPT,
  DEFAULT_SUMMARY_SYSTEM_PROMPT,
  DEFAULT_SUMMARY_UPDATE_PROMPT,
} from '../../summarization/prompts.js';
import { requireRequest, type CompactionRequest } from '../CompactionRequest.js';
import { CompactionResult } from '../CompactionResult.js';
import type { StrategyPreview } from '../CompactionStrategy.js';
import { coveredIds } from '../coverage.js';
import { planCut, requireCutWithinTurn, type CutWithinTurn } from '../cutWithinTurn.js';
import { formatEvent } from '../../session/formatEvent.js';
import { originalIdOf } from './replaceInPlace.js';
import { PREVIEW_SUMMARY_PLACEHOLDER, priorSummaryTexts, SUMMARY_METADATA, summaryPair } from './summaryEvents.js';
import { SummarizingCompactionStrategy, type SummarizingStrategyOptions } from './SummarizingCompactionStrategy.js';
import { partitionSynthetic, rootCountCut } from './windowCut.js';

export interface RecursiveSummarizationCompactionStrategyOptions extends SummarizingStrategyOptions {
  /** Root real events kept verbatim (the sliding window); default 10. */
  maxEventsToKeep?: number;
  /** Kept events shown to the summariser for continuity; default 2, must be < maxEventsToKeep. */
  overlapSize?: number;
  /**
   * The summariser's task when a prior summary is being extended; default DEFAULT_SUMMARY_UPDATE_PROMPT.
   * A custom `systemPrompt` without an `updatePrompt` is used for both (it was written for both).
   */
  updatePrompt?: string;
  /** Output cap passed to the summariser as `maxTokens`. */
  maxSummaryTokens?: number;
  /**
   * 'agent-safe' (default): never empties the window, never splits a tool call from its result, and keeps
   * the turn's opening user message (the task) when it cuts inside a turn. 'tool-pair-safe': cut at the
   * next step start. 'never': snap forward to the next turn start, archiving the whole window
   * when a single long turn is all there is. See compaction/cutWithinTurn.ts.
   */
  cutWithinTurn?: CutWithinTurn;
}

export const RECURSIVE_SUMMARIZATION_SOURCE = 'recursive-summarization';

/**
 * Rolling summary: cuts like the sliding window, summarises the archived events together
 * with every prior summary, and replaces the prior summaries with one new synthetic pair. A failed summary
 * never loses events: the window stays as it was (or gets a mechanical stub, per `failureMode`).
 */
export class RecursiveSummarizationCompactionStrategy extends SummarizingCompactionStrategy {
  static readonly DEFAULT_MAX_EVENTS_TO_KEEP = 10;
  static readonly DEFAULT_OVERLAP_SIZE = 2;
  static readonly DEFAULT_SUMMARY_SHADOW_PROMPT = DEFAULT_SUMMARY_SHADOW_PROMPT;
  static readonly DEFAULT_SYSTEM_PROMPT = DEFAULT_SUMMARY_SYSTEM_PROMPT;

  readonly maxEventsToKeep: number;
  readonly overlapSize: number;
  readonly maxSummaryTokens: number | undefined;
  readonly cutWithinTurn: CutWithinTurn;
  readonly updatePrompt: string;

  constructor(options: RecursiveSummarizationCompactionStrategyOptions) {
    super(options);
    this.maxEventsToKeep = requirePositiveInt(
      options.maxEventsToKeep ?? RecursiveSummarizationCompactionStrategy.DEFAULT_MAX_EVENTS_TO_KEEP,
      'maxEventsToKeep',
    );
    const overlap = options.overlapSize ?? RecursiveSummarizationCompactionStrategy.DEFAULT_OVERLAP_SIZE;
    if (typeof overlap !== 'number' || !Number.isInteger(overlap) || overlap < 0) {
      throw new InvalidArgumentError('overlapSize must be >= 0');
    }
    if (overlap >= this.maxEventsToKeep) {
      throw new InvalidArgumentError(`overlapSize (${overlap}) must be less than maxEventsToKeep (${this.maxEventsToKeep})`);
    }
    this.overlapSize = overlap;
    this.maxSummaryTokens =
      options.maxSummaryTokens === undefined ? undefined : requirePositiveInt(options.maxSummaryTokens, 'maxSummaryTokens');
    this.cutWithinTurn = requireCutWithinTurn(options.cutWithinTurn);
    this.updatePrompt = requireText(
      options.updatePrompt ?? (options.systemPrompt !== undefined ? options.systemPrompt : DEFAULT_SUMMARY_UPDATE_PROMPT),
      'updatePrompt',
    );
  }

  getMaxEventsToKeep(): number {
    return this.maxEventsToKeep;
  }

  getOverlapSize(): number {
    return this.overlapSize;
  }

  /** The transcript renders events as `formatEvent` does, so counting and prompts agree. */
  static formatEvent(event: SessionEvent): string {
    return formatEvent(event);
  }

  /** The cut and what the model would be asked to summarise, or null when nothing would be archived. */
  private plan(events: readonly SessionEvent[]) {
    const { synthetic, real } = partitionSynthetic(events);
    const rawCut = rootCountCut(real, this.maxEventsToKeep);
    if (rawCut < 0) return null;
    const { cut, archived: toArchive, kept: activeWindow } = planCut(real, rawCut, this.cutWithinTurn);
    if (toArchive.length === 0) return null;
    const after = real.slice(cut);
    return {
      synthetic,
      toArchive,
      activeWindow,
      overlap: after.slice(0, Math.min(this.overlapSize, after.length)),
    };
  }

  /** The range that would be summarised and the resulting window, with a placeholder instead of a model call. */
  async preview(request: CompactionRequest): Promise<StrategyPreview> {
    const { events } = requireRequest(request);
    const plan = this.plan(events);
    if (plan === null)
      return { result: CompactionResult.noop(events, 'nothing-to-archive'), summarizedEvents: [], modelCalled: false };
    const now = this.now();
    const pair = summaryPair(
      request.session.id,
      this.shadowPrompt,
      PREVIEW_SUMMARY_PLACEHOLDER,
      this.summaryMetadata(plan, 'preview', now),
      now,
    );
    return {
      result: new CompactionResult([...pair, ...plan.activeWindow], plan.toArchive, this.renderedTokens(plan.toArchive)),
      summarizedEvents: plan.toArchive,
      modelCalled: false,
    };
  }

  async compact(request: CompactionRequest): Promise<CompactionResult> {
    const { events } = requireRequest(request);
    const plan = this.plan(events);
    // Nothing would be archived: no model call.
    if (plan === null) return CompactionResult.noop(events);
    const { synthetic, toArchive, activeWindow, overlap } = plan;
    const priorSummaries = priorSummaryTexts(synthetic);

    const sources = this.sources(request, toArchive);
    const user = buildSummaryPrompt({
      priorSummaries,
      transcript: sources.map(this.eventFormatter),
      upcoming: overlap.map(this.eventFormatter),
    });
    const maxTokens = this.maxSummaryTokens;
    // The stub replaces the prior summaries too, so it carries them verbatim.
    const prompt = {
      user,
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      // Extending a prior summary is its own task (a separate update prompt, so the model revises rather than restarts).
      ...(priorSummaries.length > 0 ? { systemPrompt: this.updatePrompt } : {}),
    };
    const outcome = await this.summarize(request, prompt, sources, () => mechanicalSummary(sources, priorSummaries));
    if (outcome === null) return this.withSummarizerUsage(request, CompactionResult.noop(events, 'summarization-failed'));
    const { summary, method } = outcome;

    const now = this.now();
    const pair = summaryPair(request.session.id, this.shadowPrompt, summary, this.summaryMetadata(plan, method, now), now);
    // No token count in the metadata: the estimator only ever sees rendered events (scenario 81).
    // Prior synthetic events are superseded (in neither list): the repository drops them.
    return this.withSummarizerUsage(
      request,
      new CompactionResult([...pair, ...activeWindow], toArchive, this.renderedTokens(toArchive)),
    );
  }

  private summaryMetadata(
    plan: { synthetic: readonly SessionEvent[]; toArchive: readonly SessionEvent[] },
    method: 'model' | 'stub' | 'preview',
    now: Date,
  ): Record<string, unknown> {
    const { synthetic, toArchive } = plan;
    const firstCovered = synthetic.find((e) => typeof e.metadata[SUMMARY_METADATA.firstEventId] === 'string');
    return {
      compactionSource: RECURSIVE_SUMMARIZATION_SOURCE,
      [SUMMARY_METADATA.method]: method,
      [SUMMARY_METADATA.firstEventId]: firstCovered?.metadata[SUMMARY_METADATA.firstEventId] ?? toArchive[0]!.id,
      [SUMMARY_METADATA.lastEventId]: toArchive[toArchive.length - 1]!.id,
      // The new summary replaces the prior ones, so it covers what they covered (the coverage ledger).
      [SUMMARY_METADATA.eventIds]: [
        ...new Set([
          ...synthetic.flatMap((e) => (e.messageType === 'user' ? [] : coveredIds(e))),
          ...toArchive.map(originalIdOf),
        ]),
      ],
      ...(method === 'model' && this.chatClient.model ? { [SUMMARY_METADATA.model]: this.chatClient.model } : {}),
      [SUMMARY_METADATA.createdAt]: now.toISOString(),
    };
  }
}
