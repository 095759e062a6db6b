import {
  context,
  createNoopMeter,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  metrics,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Counter,
  type Histogram,
  type MeterProvider,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { METRIC } from './attributes.js';

/** The instrumentation scope of every span and metric of the library. */
export const INSTRUMENTATION_SCOPE = 'session-compaction';

export interface TelemetryOptions {
  /**
   * Spans and metrics at all; default true. They cost next to nothing while the application has no
   * OpenTelemetry SDK installed (the API's no-op implementations), so this is for measuring that cost.
   */
  enabled?: boolean;
  /**
   * Put message content (summariser prompts and summaries, retrieval queries) on spans; default false, or
   * true when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true. Content may hold personal data.
   */
  captureContent?: boolean;
}

const settings = {
  enabled: true,
  captureContent: process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === 'true',
};

/** Process-wide telemetry settings; unset options keep their current value. */
export function configureTelemetry(options: TelemetryOptions): void {
  if (options.enabled !== undefined) settings.enabled = options.enabled;
  if (options.captureContent !== undefined) settings.captureContent = options.captureContent;
}

export function telemetryEnabled(): boolean {
  return settings.enabled;
}

export function captureContent(): boolean {
  return settings.enabled && settings.captureContent;
}

let cachedTracer: { provider: TracerProvider; tracer: Tracer } | undefined;

/**
 * The global tracer. Cached per global provider: the API's proxy tracer picks up an SDK installed after the
 * library was imported, and `trace.disable()` (tests replacing their SDK) yields a new provider.
 */
export function tracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (cachedTracer?.provider !== provider) cachedTracer = { provider, tracer: provider.getTracer(INSTRUMENTATION_SCOPE) };
  return cachedTracer.tracer;
}

export interface Instruments {
  /** False while no meter provider is installed: values that cost something to compute can be skipped. */
  active: boolean;
  compactions: Counter;
  tokensSaved: Counter;
  casConflicts: Counter;
  summarizerFailures: Counter;
  contextPressure: Histogram;
  retrievalDuration: Histogram;
  operationDuration: Histogram;
  tokenUsage: Histogram;
  dbOperationDuration: Histogram;
  turnTokens: Counter;
  estimatedCost: Counter;
}

let cached: { provider: MeterProvider; instruments: Instruments } | undefined;

/**
 * The metric instruments, created once per meter provider. The metrics API has no proxy meter: instruments
 * taken from the no-op provider stay no-ops, so they are re-created when the global provider changes.
 */
export function instruments(): Instruments {
  const provider = metrics.getMeterProvider();
  if (cached?.provider === provider) return cached.instruments;
  const meter = provider.getMeter(INSTRUMENTATION_SCOPE);
  const seconds = {
    unit: 's',
    advice: { explicitBucketBoundaries: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] },
  };
  const created: Instruments = {
    active: meter !== createNoopMeter(),
    compactions: meter.createCounter(METRIC.COMPACTIONS, { description: 'Compactions by outcome', unit: '{compaction}' }),
    tokensSaved: meter.createCounter(METRIC.TOKENS_SAVED, {
      description: 'Estimated tokens removed from active windows',
      unit: '{token}',
    }),
    casConflicts: meter.createCounter(METRIC.CAS_CONFLICTS, {
      description: 'Compaction commits that lost the version check',
      unit: '{conflict}',
    }),
    summarizerFailures: meter.createCounter(METRIC.SUMMARIZER_FAILURES, {
      description: 'Failed summariser calls by failure kind and mode',
      unit: '{failure}',
    }),
    contextPressure: meter.createHistogram(METRIC.CONTEXT_PRESSURE, {
      description: 'Estimated prompt tokens / context window at request time',
      unit: '1',
      advice: { explicitBucketBoundaries: [0.1, 0.25, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25] },
    }),
    retrievalDuration: meter.createHistogram(METRIC.RETRIEVAL_DURATION, { description: 'Retriever latency', ...seconds }),
    operationDuration: meter.createHistogram(METRIC.GEN_AI_OPERATION_DURATION, {
      description: 'Summariser call latency',
      ...seconds,
    }),
    tokenUsage: meter.createHistogram(METRIC.GEN_AI_TOKEN_USAGE, {
      description: 'Summariser tokens per call, as the endpoint reported them',
      unit: '{token}',
      advice: { explicitBucketBoundaries: [64, 256, 1024, 4096, 16384, 65536, 262144] },
    }),
    dbOperationDuration: meter.createHistogram(METRIC.DB_OPERATION_DURATION, {
      description: 'Repository operation latency',
      ...seconds,
    }),
    turnTokens: meter.createCounter(METRIC.TURN_TOKENS, {
      description:
        "Tokens of SessionMemory turns by type (the chat call's input, cached input, cache writes, output; the summariser's)",
      unit: '{token}',
    }),
    estimatedCost: meter.createCounter(METRIC.ESTIMATED_COST, {
      description:
        "Estimated cost of SessionMemory turns from the configured price table, in its currency, by source (the turn's model call, its compactions)",
      unit: '1',
    }),
  };
  cached = { provider, instruments: created };
  return created;
}

/** Marks a span failed: status ERROR, `error.type` = the error's name, the exception recorded. */
export function recordError(span: Span, error: unknown, type?: string): void {
  const e = error instanceof Error ? error : new Error(String(error));
  span.recordException(e);
  span.setAttribute('error.type', type ?? e.name);
  span.setStatus({ code: SpanStatusCode.ERROR, message: e.message });
}

/**
 * Runs `work` in an active span (children nest under it); an exception marks the span failed and is rethrown.
 * Without an SDK the no-op tracer returns a span with an invalid context: nothing to end or propagate, so
 * `work` runs directly; with telemetry disabled it runs with a non-recording span.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  if (!settings.enabled) return work(DISABLED_SPAN);
  const span = tracer().startSpan(name, { kind, attributes });
  if (!isSpanContextValid(span.spanContext())) return work(span);
  return context.with(trace.setSpan(context.active(), span), async () => {
    try {
      return await work(span);
    } catch (error) {
      recordError(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

const DISABLED_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Seconds since `start` (a `performance.now()` reading), for duration histograms. */
export function secondsSince(start: number): number {
  return (performance.now() - start) / 1000;
}
