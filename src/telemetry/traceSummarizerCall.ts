import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ATTR } from './attributes.js';
import { captureContent, inSpan, instruments, secondsSince } from './telemetry.js';

export interface SummarizerCallInfo {
  sessionId: string;
  model: string | undefined;
  strategy: string;
  maxTokens?: number;
  /** What the strategy does when the call fails ('skip', 'stub', 'throw'). */
  failureMode: string;
  /** The prompt, for content capture only. */
  system: string;
  user: string;
}

export interface SummarizerCallOutcome {
  /** The summary, or null on failure. */
  text: string | null;
  /** 'blank', 'quality', 'connection', … when the call failed. */
  failureKind: string | null;
  /** Tokens as the endpoint reported them; null when the client reports none. */
  usage: { input: number; output: number } | null;
}

/**
 * A GenAI `chat` span (kind CLIENT) around one summariser call, with latency and token histograms and a
 * failure counter. Tokens the endpoint reported go to `gen_ai.usage.*` and the token histogram; for a client
 * that reports none, the strategy's estimates go to `session_compaction.summary.*_tokens_estimated` on the
 * span only, so that metrics never mix guesses with billed tokens. Prompt and summary go on the span only
 * when content capture is enabled.
 */
export function traceSummarizerCall<R>(
  info: SummarizerCallInfo,
  call: () => Promise<R>,
  read: (result: R) => SummarizerCallOutcome,
  estimate: (text: string) => number,
): Promise<R> {
  const model = info.model ?? 'unknown';
  const base = {
    [ATTR.OPERATION_NAME]: 'chat',
    [ATTR.REQUEST_MODEL]: model,
    [ATTR.CONVERSATION_ID]: info.sessionId,
    [ATTR.STRATEGY]: info.strategy,
    ...(info.maxTokens !== undefined ? { [ATTR.REQUEST_MAX_TOKENS]: info.maxTokens } : {}),
  };
  return inSpan(
    info.model !== undefined ? `chat ${info.model}` : 'chat',
    base,
    async (span) => {
      const started = performance.now();
      const result = await call();
      const seconds = secondsSince(started);
      const outcome = read(result);
      const m = instruments();
      const metricAttributes = { [ATTR.OPERATION_NAME]: 'chat', [ATTR.REQUEST_MODEL]: model };
      if (outcome.failureKind !== null) {
        span.setAttributes({
          [ATTR.SUMMARY_OUTCOME]: 'failed',
          [ATTR.FAILURE_KIND]: outcome.failureKind,
          [ATTR.FAILURE_MODE]: info.failureMode,
          [ATTR.ERROR_TYPE]: outcome.failureKind,
        });
        span.setStatus({ code: SpanStatusCode.ERROR, message: `summariser call failed (${outcome.failureKind})` });
        m.operationDuration.record(seconds, { ...metricAttributes, [ATTR.ERROR_TYPE]: outcome.failureKind });
        m.summarizerFailures.add(1, { [ATTR.FAILURE_KIND]: outcome.failureKind, [ATTR.FAILURE_MODE]: info.failureMode });
      } else {
        span.setAttribute(ATTR.SUMMARY_OUTCOME, 'ok');
        m.operationDuration.record(seconds, metricAttributes);
      }
      if (outcome.usage !== null) {
        span.setAttributes({ [ATTR.USAGE_INPUT_TOKENS]: outcome.usage.input, [ATTR.USAGE_OUTPUT_TOKENS]: outcome.usage.output });
        m.tokenUsage.record(outcome.usage.input, { ...metricAttributes, [ATTR.TOKEN_TYPE]: 'input' });
        m.tokenUsage.record(outcome.usage.output, { ...metricAttributes, [ATTR.TOKEN_TYPE]: 'output' });
      } else if (span.isRecording()) {
        span.setAttributes({
          [ATTR.INPUT_TOKENS_ESTIMATED]: estimate(info.system) + estimate(info.user),
          [ATTR.OUTPUT_TOKENS_ESTIMATED]: outcome.text === null ? 0 : estimate(outcome.text),
        });
      }
      if (captureContent()) {
        span.setAttribute(
          ATTR.INPUT_MESSAGES,
          JSON.stringify([
            { role: 'system', parts: [{ type: 'text', content: info.system }] },
            { role: 'user', parts: [{ type: 'text', content: info.user }] },
          ]),
        );
        if (outcome.text !== null)
          span.setAttribute(
            ATTR.OUTPUT_MESSAGES,
            JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: outcome.text }] }]),
          );
      }
      return result;
    },
    SpanKind.CLIENT,
  );
}
