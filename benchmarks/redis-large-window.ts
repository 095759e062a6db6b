// Redis with a 200,000-event window: batch append, compaction and fork, with SQLite beside it in the same run.
//
//   nice npx tsx --conditions=session-compaction-source benchmarks/redis-large-window.ts [--events 200000]
//
// Before issue 26 every event of a Redis write went into one script call (`evalsha(...)` with two arguments
// per event): at 100,000 events the call itself overflowed the stack (RangeError: Maximum call stack size
// exceeded). Writes over 5,000 events are now staged in bounded calls and committed by one atomic script.
// Times one `appendEvents` of --events events into a new session, one compaction that archives all but the
// last 10 (through the service, SlidingWindowCompactionStrategy), and one `forkSession` of the whole log,
// on Redis and on SQLite (`:memory:`). Writes benchmarks/results/redis-large-window.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import {
  createDefaultLogger,
  DefaultSessionService,
  EventFilter,
  Messages,
  RedisSessionRepository,
  Session,
  SessionEvent,
  SlidingWindowCompactionStrategy,
  SqliteSessionRepository,
  type SessionRepository,
} from 'session-compaction';
import { arg } from './support/args.js';
import { deleteRedisPrefix } from './support/redis.js';

const EVENTS = Number(arg('events', '200000'));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const OUT = fileURLToPath(new URL('./results/redis-large-window.json', import.meta.url));
const logger = createDefaultLogger({ silent: true });

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await work();
  return { ms: Math.round(performance.now() - t0), value };
}

async function measure(
  name: string,
  repo: SessionRepository & { appendEvents(id: string, e: readonly SessionEvent[]): Promise<number> },
) {
  const service = new DefaultSessionService(repo, { logger });
  const id = `large-${Date.now().toString(36)}`;
  await repo.save(Session.create({ id, userId: 'bench' }));
  const events = Array.from({ length: EVENTS }, (_, i) =>
    SessionEvent.create({
      sessionId: id,
      id: `e${i}`,
      message: i % 2 === 0 ? Messages.user(`question ${i} about the deployment`) : Messages.assistant(`answer ${i}: done`),
    }),
  );
  const append = await timed(() => repo.appendEvents(id, events));
  const compact = await timed(() => service.compact(id, () => true, new SlidingWindowCompactionStrategy({ maxEvents: 10 })));
  const fork = await timed(() => service.forkSession(id));
  const copied = (await repo.findEvents(fork.value.id, EventFilter.all())).length;
  await service.delete(fork.value.id);
  await service.delete(id);
  const row = {
    backend: name,
    events: EVENTS,
    appendMs: append.ms,
    appended: append.value,
    compactMs: compact.ms,
    archived: compact.value.archivedEvents.length,
    forkMs: fork.ms,
    forkCopied: copied,
  };
  console.log(JSON.stringify(row));
  return row;
}

const rows = [];
const client = new Redis(REDIS_URL);
const prefix = `bench_large_${Date.now().toString(36)}`;
const redis = new RedisSessionRepository({ client, prefix, logger, commandTimeoutMs: 120_000 });
try {
  rows.push(await measure('redis', redis));
} finally {
  // Deleting the sessions leaves their tombstones and the store's migration record: the prefix goes as a whole.
  await deleteRedisPrefix(client, prefix);
  await redis.close();
  await client.quit();
}
const sqlite = new SqliteSessionRepository({ path: ':memory:', logger });
try {
  rows.push(await measure('sqlite (:memory:)', sqlite));
} finally {
  await sqlite.close();
}
mkdirSync(fileURLToPath(new URL('./results/', import.meta.url)), { recursive: true });
writeFileSync(OUT, JSON.stringify({ date: new Date().toISOString(), rows }, null, 2) + '\n');
