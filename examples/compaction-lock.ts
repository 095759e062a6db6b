// Two service instances — think two server processes — share one SQLite file and a SqliteCompactionLock:
// when both compact the same conversation at once, only one pays for a summary. With PostgreSQL or Redis,
// use PostgresCompactionLock / RedisCompactionLock from 'session-compaction/postgres' / '/redis'.
// In your project: import { ... } from 'session-compaction' and 'session-compaction/sqlite'.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DefaultSessionService,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  TurnCountTrigger,
  type ChatClient,
  SqliteSessionRepository,
} from 'session-compaction';
import { SqliteCompactionLock } from 'session-compaction/sqlite';

const dir = mkdtempSync(join(tmpdir(), 'compaction-lock-example-'));
const path = join(dir, 'sessions.db');

let summaries = 0;
// A stand-in for a model: slow enough that the two compactions really overlap.
const model: ChatClient = {
  async call() {
    summaries++;
    await new Promise((resolve) => setTimeout(resolve, 200));
    return 'The user asked eight questions about the weather; all were answered.';
  },
};

function instance() {
  const repository = new SqliteSessionRepository({ path });
  const lock = new SqliteCompactionLock({ path });
  // waitMs 0 (default): a compaction that finds the lease held returns at once with skipReason 'lock-held'.
  const service = new DefaultSessionService(repository, { compactionLock: { lock, leaseMs: 10_000 } });
  return { service, close: async () => (await lock.close(), repository.close()) };
}

const a = instance();
const b = instance();
const session = await a.service.create({ userId: 'alice' });
for (let i = 1; i <= 8; i++) {
  await a.service.appendMessage(session.id, Messages.user(`Question ${i}?`));
  await a.service.appendMessage(session.id, Messages.assistant(`Answer ${i}.`));
}

const strategy = new RecursiveSummarizationCompactionStrategy({ chatClient: model, maxEventsToKeep: 4 });
const [first, second] = await Promise.all([
  a.service.compact(session.id, new TurnCountTrigger(5), strategy),
  b.service.compact(session.id, new TurnCountTrigger(5), strategy),
]);
console.log(`instance a: ${first.skipReason ?? `archived ${first.eventsRemoved}`}`);
console.log(`instance b: ${second.skipReason ?? `archived ${second.eventsRemoved}`}`);
console.log(`summaries paid for: ${summaries}`);
// → one instance archived 12 events, the other reports lock-held; summaries paid for: 1

await a.close();
await b.close();
rmSync(dir, { recursive: true, force: true });
