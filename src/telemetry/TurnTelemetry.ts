import type { Span } from '@opentelemetry/api';
import { ATTR, SPAN } from './attributes.js';
import { inSpan, instruments } from './telemetry.js';

/** What one SessionMemory turn reports on its `session_compaction.turn` span. */
export class TurnTelemetry {
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

  finished(result: { promptTokens: number | undefined; persisted: number; archived: number }): void {
    this.span.setAttributes({ [ATTR.PERSISTED_COUNT]: result.persisted, [ATTR.ARCHIVED_COUNT]: result.archived });
    if (result.promptTokens !== undefined) this.span.setAttribute(ATTR.USAGE_INPUT_TOKENS, result.promptTokens);
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
