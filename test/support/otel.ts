/**
 * An OpenTelemetry SDK with in-memory exporters, installed globally for one test file: spans as exported,
 * metrics collected on demand.
 */
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';

export interface OtelCapture {
  spans(): ReadableSpan[];
  spansNamed(name: string): ReadableSpan[];
  /** The metric's data points after a collection, [] when it was never recorded. */
  points(metric: string): DataPoint<unknown>[];
  collect(): Promise<void>;
  reset(): void;
  shutdown(): Promise<void>;
}

export function installOtel(): OtelCapture {
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spanExporter })] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(tracerProvider);
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);
  let collected: MetricData[] = [];
  return {
    spans: () => spanExporter.getFinishedSpans(),
    spansNamed: (name) => spanExporter.getFinishedSpans().filter((s) => s.name === name),
    points: (metric) => collected.find((m) => m.descriptor.name === metric)?.dataPoints ?? [],
    async collect() {
      metricExporter.reset();
      await reader.forceFlush();
      collected = metricExporter.getMetrics().flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics));
    },
    reset() {
      spanExporter.reset();
    },
    async shutdown() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      trace.disable();
      metrics.disable();
      context.disable();
    },
  };
}
