import type { Span } from '@opentelemetry/api';
import { ATTR, SPAN } from './attributes.js';
import { inSpan, instruments } from './telemetry.js';

/** A turn's usage record, as SessionMemory reports it (structurally its UsageRecord). */
export interface TurnUsageTelemetry {
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  summarizerInputTokens: number;
  summarizerOutputTokens: number;
  estimatedCost?: number;
  /** Of `estimatedCost`, what the turn's compactions cost. */
  estimatedCompactionCost?: number;
}

/** What one SessionMemory turn reports on its `session_compaction.turn` span. */
export class TurnTelemetry {
  private model: string | undefined;

  constructor(readonly span: Span) {}

  /**
   * The prompt is built: its estimated size and, when the context window is known, the pressure on it
   * (estimated prompt tokens / window), recorded as a histogram at request time.
   */
  prepared(turn: {
    model: string;
    contextStatus: string;
    estimatedPromptTokens: number;
    contextWindowTokens: number | undefined;
  }): void {
    this.model = turn.model;
    this.span.setAttributes({
      [ATTR.REQUEST_MODEL]: turn.model,
      [ATTR.CONTEXT_STATUS]: turn.contextStatus,
      [ATTR.PROMPT_TOKENS_ESTIMATED]: turn.estimatedPromptTokens,
    });
    if (turn.contextWindowTokens === undefined) return;
    const pressure = turn.estimatedPromptTokens / turn.contextWindowTokens;
    this.span.setAttributes({ [ATTR.CONTEXT_WINDOW_TOKENS]: turn.contextWindowTokens, [ATTR.CONTEXT_PRESSURE]: pressure });
    instruments().contextPressure.record(pressure, { [ATTR.REQUEST_MODEL]: turn.model });
  }

  finished(result: {
    promptTokens: number | undefined;
    persisted: number;
    archived: number;
    /** The turn's usage record; its counts go on the span and into the token and cost counters. */
    usage?: TurnUsageTelemetry;
    currency?: string;
  }): void {
    this.span.setAttributes({ [ATTR.PERSISTED_COUNT]: result.persisted, [ATTR.ARCHIVED_COUNT]: result.archived });
    if (result.promptTokens !== undefined) this.span.setAttribute(ATTR.USAGE_INPUT_TOKENS, result.promptTokens);
    if (result.usage !== undefined) this.usage(result.usage, result.currency ?? 'USD');
  }

  private usage(usage: TurnUsageTelemetry, currency: string): void {
    const model = this.model === undefined ? {} : { [ATTR.REQUEST_MODEL]: this.model };
    const reported = usage.inputTokens > 0 || usage.outputTokens > 0;
    if (reported) {
      this.span.setAttributes({
        [ATTR.USAGE_OUTPUT_TOKENS]: usage.outputTokens,
        [ATTR.USAGE_CACHED_INPUT_TOKENS]: usage.cachedInputTokens,
        [ATTR.USAGE_CACHE_WRITE_TOKENS]: usage.cacheWriteTokens,
      });
    }
    if (usage.summarizerInputTokens > 0 || usage.summarizerOutputTokens > 0) {
      this.span.setAttributes({
        [ATTR.USAGE_SUMMARIZER_INPUT_TOKENS]: usage.summarizerInputTokens,
        [ATTR.USAGE_SUMMARIZER_OUTPUT_TOKENS]: usage.summarizerOutputTokens,
      });
    }
    if (usage.estimatedCost !== undefined) {
      this.span.setAttributes({ [ATTR.USAGE_ESTIMATED_COST]: usage.estimatedCost, [ATTR.COST_CURRENCY]: currency });
      if (usage.estimatedCompactionCost !== undefined && usage.estimatedCompactionCost > 0) {
        this.span.setAttribute(ATTR.USAGE_ESTIMATED_COMPACTION_COST, usage.estimatedCompactionCost);
      }
    }
    const meters = instruments();
    if (!meters.active) return;
    const counts: [string, number][] = [
      ['input', usage.inputTokens],
      ['cached_input', usage.cachedInputTokens],
      ['cache_write', usage.cacheWriteTokens],
      ['output', usage.outputTokens],
      ['summarizer_input', usage.summarizerInputTokens],
      ['summarizer_output', usage.summarizerOutputTokens],
    ];
    for (const [type, n] of counts) if (n > 0) meters.turnTokens.add(n, { ...model, [ATTR.TOKEN_TYPE]: type });
    if (usage.estimatedCost !== undefined) {
      // Compactions apart from the turn's own call, so that a dashboard can tell what compacting costs.
      const compaction = Math.min(usage.estimatedCost, Math.max(0, usage.estimatedCompactionCost ?? 0));
      const parts: [string, number][] = [
        ['turn', usage.estimatedCost - compaction],
        ['compaction', compaction],
      ];
      for (const [source, cost] of parts) {
        if (cost > 0) meters.estimatedCost.add(cost, { ...model, [ATTR.COST_CURRENCY]: currency, [ATTR.COST_SOURCE]: source });
      }
    }
  }
}

/** The span around one SessionMemory turn; the compaction and repository spans of the turn nest under it. */
export function traceTurn<T>(sessionId: unknown, streaming: boolean, work: (telemetry: TurnTelemetry) => Promise<T>): Promise<T> {
  const attributes = {
    [ATTR.OPERATION_NAME]: 'chat',
    [ATTR.STREAMING]: streaming,
    ...(typeof sessionId === 'string' ? { [ATTR.CONVERSATION_ID]: sessionId } : {}),
  };
  return inSpan(SPAN.TURN, attributes, (span) => work(new TurnTelemetry(span)));
}
