// Runs in a fresh project that installed the packed tarball beside an application's own OpenTelemetry: an
// older @opentelemetry/api (1.9) with its SDK. The library must report through the application's API instance
// (a peer dependency), not a copy of its own whose spans go nowhere.
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  InMemorySessionRepository,
  DefaultSessionService,
  Messages,
  SlidingWindowCompactionStrategy,
  TurnCountTrigger,
} from 'session-compaction';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider();
provider.addSpanProcessor(new SimpleSpanProcessor(exporter));
trace.setGlobalTracerProvider(provider);

const service = new DefaultSessionService(new InMemorySessionRepository());
const session = await service.create({ userId: 'otel' });
for (let i = 1; i <= 4; i++) {
  await service.appendMessage(session.id, Messages.user(`question ${i}`));
  await service.appendMessage(session.id, Messages.assistant(`answer ${i}`));
}
await service.compact(session.id, new TurnCountTrigger(2), new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
await provider.forceFlush();
const names = exporter.getFinishedSpans().map((s) => s.name);
if (!names.some((n) => n.includes('compact'))) {
  console.error(`pack smoke test: no compaction span through the application's OpenTelemetry API (spans: ${names.join(', ')})`);
  process.exit(1);
}
console.log(`pack smoke test: spans through the application's @opentelemetry/api — ok (${names.length} spans)`);
