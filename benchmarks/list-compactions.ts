// What `listCompactions` costs for a session whose compaction archived --events events, with the id arrays
// (the default) and without them (`{ eventIds: false }`, summaries slimmed in the store), side by side in the
// same run on every backend.
//
//   nice -n 10 npx tsx --conditions=session-compaction-source benchmarks/list-compactions.ts [--events 100000] [--runs 5]
//
// Per backend: one session of --events events and one recorded compaction that archived all but the last two
// (written through the repository: windowBefore holds every id, archivedEventIds all but two; event ids are
// the default UUIDs). Each form is listed --runs times, alternating which goes first; reported are the median
// time of one listing through the service and the size of what it returned (its JSON, the bytes a driver
// decodes: the ids are nearly all of it), with the load average. PostgreSQL and Redis are skipped when
// unreachable (PG_URL, REDIS_URL). Writes benchmarks/results/list-compactions.json.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  createDefaultLogger,
  DefaultSessionService,
  InMemorySessionRepository,
  Messages,
  PostgresSessionRepository,
  RedisSessionRepository,
  Session,
  SessionEvent,
  SqliteSessionRepository,
  type CompactionRecord,
  type SessionRepository,
} from 'session-compaction';
import type { BatchAppendRepository } from 'session-compaction/spi';
import { arg } from './support/args.js';
import { dropPostgresStore } from './support/postgres.js';
import { deleteRedisPrefix } from './support/redis.js';

const EVENTS = Number(arg('events', '100000'));
const RUNS = Number(arg('runs', '5'));
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const OUT = fileURLToPath(new URL('./results/list-compactions.json', import.meta.url));
const logger = createDefaultLogger({ silent: true });

type Store = SessionRepository & BatchAppendRepository;

interface Backend {
  name: string;
  open(): Promise<{ repository: Store; cleanup: () => Promise<void> } | null>;
}

const prefix = `bench_lc_${randomBytes(4).toString('hex')}`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'list-compactions-'));

const backends: Backend[] = [
  {
    name: 'memory',
    open: async () => ({ repository: new InMemorySessionRepository(), cleanup: async () => {} }),
  },
  {
    name: 'sqlite (file)',
    open: async () => {
      const repository = new SqliteSessionRepository({ path: path.join(dir, 'store.db'), synchronous: 'NORMAL', logger });
      return { repository, cleanup: () => repository.close() };
    },
  },
  {
    name: 'postgres',
    open: async () => {
      const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
      try {
        await pool.query('SELECT 1');
      } catch {
        await pool.end();
        return null;
      }
      const repository = new PostgresSessionRepository({ pool, prefix, logger });
      return {
        repository,
        cleanup: async () => {
          await dropPostgresStore(pool, prefix);
          await pool.end();
        },
      };
    },
  },
  {
    name: 'redis',
    open: async () => {
      const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await client.connect();
      } catch {
        client.disconnect();
        return null;
      }
      const repository = new RedisSessionRepository({ client, prefix, logger });
      return {
        repository,
        cleanup: async () => {
          await deleteRedisPrefix(client, prefix);
          client.disconnect();
        },
      };
    },
  },
];

/** One session of EVENTS events and one recorded compaction that archived all but the last two. */
async function seed(repository: Store): Promise<string> {
  const id = 'long';
  await repository.save(Session.create({ id, userId: 'bench' }));
  const events = Array.from({ length: EVENTS }, (_, i) =>
    // Default ids (UUIDs), as an application gets them: the ids are what the full form carries.
    SessionEvent.create({
      sessionId: id,
      message: i % 2 === 0 ? Messages.user(`question ${i}`) : Messages.assistant(`answer ${i}`),
    }),
  );
  for (let i = 0; i < events.length; i += 5_000) await repository.appendEvents(id, events.slice(i, i + 5_000));
  const ids = events.map((e) => e.id);
  const version = await repository.getEventVersion(id);
  const record: CompactionRecord = {
    id: 'c1',
    sessionId: id,
    createdAt: new Date(),
    strategy: 'SlidingWindowCompactionStrategy',
    trigger: 'function',
    compactionSource: null,
    versionBefore: version,
    versionAfter: version + 1,
    windowBefore: ids,
    windowAfter: ids.slice(-2),
    archivedEventIds: ids.slice(0, -2),
    addedEventIds: [],
    removedEvents: [],
    range: null,
    revertedAt: null,
  };
  const committed = await repository.compactEvents(id, events.slice(0, -2), events.slice(-2), version, record);
  if (!committed) throw new Error('the seeding compaction lost its CAS');
  return id;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(service: DefaultSessionService, id: string, eventIds: boolean) {
  const t0 = performance.now();
  const records = eventIds ? await service.listCompactions(id) : await service.listCompactions(id, { eventIds: false });
  const ms = performance.now() - t0;
  return { ms, bytes: Buffer.byteLength(JSON.stringify(records)) };
}

const results: Record<string, unknown>[] = [];
try {
  for (const backend of backends) {
    const opened = await backend.open();
    if (opened === null) {
      console.log(`${backend.name}: unreachable, skipped`);
      continue;
    }
    try {
      const service = new DefaultSessionService(opened.repository, { logger });
      const id = await seed(opened.repository);
      const full: { ms: number; bytes: number }[] = [];
      const light: { ms: number; bytes: number }[] = [];
      // A first listing of each form warms statements, scripts and connections; not counted.
      await measure(service, id, true);
      await measure(service, id, false);
      for (let run = 0; run < RUNS; run++) {
        // Alternating which form goes first, so neither always runs on a warmer cache.
        if (run % 2 === 0) {
          full.push(await measure(service, id, true));
          light.push(await measure(service, id, false));
        } else {
          light.push(await measure(service, id, false));
          full.push(await measure(service, id, true));
        }
      }
      const row = {
        backend: backend.name,
        full: { ms: Math.round(median(full.map((m) => m.ms)) * 10) / 10, bytes: full[0]!.bytes },
        light: { ms: Math.round(median(light.map((m) => m.ms)) * 10) / 10, bytes: light[0]!.bytes },
      };
      console.log(JSON.stringify(row));
      results.push(row);
    } finally {
      await opened.cleanup();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const result = { date: new Date().toISOString(), events: EVENTS, runs: RUNS, loadavg: os.loadavg(), results };
mkdirSync(path.dirname(OUT), { recursive: true });
writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
