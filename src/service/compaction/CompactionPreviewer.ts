import { CompactionResult } from '../../compaction/CompactionResult.js';
import { placeInWindow, rangeBounds, resolveCompactionRange } from '../../compaction/CompactionRange.js';
import { toCompactionStrategy, type CompactionStrategyLike, type StrategyPreview } from '../../compaction/CompactionStrategy.js';
import { toCompactionTrigger, type CompactionTriggerLike } from '../../compaction/CompactionTrigger.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { requireStorableText } from '../../validation/inputs.js';
import type { CompactionPreview, PreviewOptions } from '../SessionService.js';
import { readCompactionWindow } from './readCompactionWindow.js';

export interface CompactionPreviewerOptions {
  repository: SessionRepository;
  now: () => Date;
  estimator: TokenCountEstimator;
}

/** What compact would do, without writing; summarising strategies skip the model unless `callModel`. */
export class CompactionPreviewer {
  constructor(private readonly options: CompactionPreviewerOptions) {}

  async preview(
    sessionId: string,
    trigger: CompactionTriggerLike,
    strategy: CompactionStrategyLike,
    options: PreviewOptions = {},
  ): Promise<CompactionPreview> {
    requireStorableText(sessionId, 'sessionId');
    const t = toCompactionTrigger(trigger);
    const s = toCompactionStrategy(strategy);
    const { request } = await readCompactionWindow(this.options.repository, sessionId);
    // Resolved before the trigger runs, as compact does: a bad range is an error whatever the trigger says.
    const scope = options.range === undefined ? null : resolveCompactionRange(request.events, options.range, this.options.now());
    const tokensBefore = estimateEventsTokens(request.events, this.options.estimator);
    const base = {
      tokensBefore,
      eventsBefore: request.events.length,
      ...(options.range !== undefined ? { range: scope === null ? null : rangeBounds(request.events, scope) } : {}),
    };
    const unchanged = (triggered: boolean): CompactionPreview => ({
      ...base,
      triggered,
      result: CompactionResult.noop(request.events),
      tokensAfter: tokensBefore,
      eventsAfter: request.events.length,
      modelCalled: false,
    });
    if (!(await t.shouldCompact(request))) return unchanged(false);
    // With a range, the strategy previews the range only and its result takes the range's place.
    if (options.range !== undefined && scope === null) return unchanged(true);
    const scoped = scope === null ? request : request.withEvents(request.events.slice(scope.start, scope.end));
    const preview: Omit<StrategyPreview, 'modelCalled'> & { modelCalled: boolean | undefined } =
      s.preview !== undefined && options.callModel !== true
        ? await s.preview(scoped)
        : { result: await s.compact(scoped), modelCalled: s.preview !== undefined ? true : undefined };
    const result = scope === null ? preview.result : placeInWindow(request.events, scope, preview.result);
    return {
      ...base,
      triggered: true,
      result,
      tokensAfter: estimateEventsTokens(result.compactedEvents, this.options.estimator),
      eventsAfter: result.compactedEvents.length,
      modelCalled: preview.modelCalled,
      ...(preview.summarizedEvents !== undefined ? { summarizedEvents: preview.summarizedEvents } : {}),
      ...(preview.stages !== undefined ? { stages: preview.stages } : {}),
    };
  }
}
