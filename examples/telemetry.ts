// OpenTelemetry spans and metrics of a compaction, printed from the SDK's in-memory exporters.
//
//   npx tsx examples/telemetry.ts
//
// In an application, register your own exporters (OTLP, …) instead; the library only uses @opentelemetry/api.
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import {
  AdditiveSummarizationCompactionStrategy,
  createDefaultLogger,
  DefaultSessionService,
  ExtractiveSummarizer,
  InMemorySessionRepository,
  Messages,
  TurnCountTrigger,
} from 'session-compaction';

const spans = new InMemorySpanExporter();
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] }));
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 60_000 });
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));

const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: createDefaultLogger({ level: 'error' }) });
const session = await service.create({ userId: 'alice' });
for (let i = 1; i <= 6; i++) {
  await service.appendMessage(session.id, Messages.user(`Question ${i} about the booking?`));
  await service.appendMessage(session.id, Messages.assistant(`Answer ${i}: the booking is confirmed.`));
}
const strategy = new AdditiveSummarizationCompactionStrategy({
  chatClient: new ExtractiveSummarizer({ maxTokens: 64 }),
  keepTurns: 2,
  maxSummaryTokens: 400,
});
await service.compact(session.id, new TurnCountTrigger(3), strategy);

// The appends before the compaction have repository spans of their own; show the compaction's tree.
for (const span of spans
  .getFinishedSpans()
  .filter((s) => s.parentSpanContext !== undefined || !s.name.startsWith('repository.'))) {
  const parent = span.parentSpanContext?.spanId ?? '-';
  console.log(`${span.name.padEnd(28)} parent ${parent.padEnd(16)} ${JSON.stringify(span.attributes)}`);
}
await reader.forceFlush();
for (const metric of metricExporter.getMetrics().flatMap((m) => m.scopeMetrics.flatMap((s) => s.metrics))) {
  const points = metric.dataPoints.map((p) => `${JSON.stringify(p.attributes)} → ${JSON.stringify(p.value)}`);
  console.log(`${metric.descriptor.name}: ${points.join('; ')}`);
}
