// A hot session: 8 writers append to one session and compact it, each through its own DefaultSessionService
// (as 8 processes would: no shared in-process lock, no compaction lease), on every backend. How many compaction
// attempts (strategy runs) commit, how many summariser calls are wasted, and whether any event is lost —
// under the default conflict policy ('skip') and under 'rebase'.
//
//   node --import tsx benchmarks/hot-session.ts [--writers 8] [--rounds 25] [--summary-ms 5]
//        [--backends memory,sqlite,postgres,redis]
//
// Each writer, `rounds` times: append a user message and a reply, then compact with a trigger that fires above
// 12 active events and a summarising strategy (RecursiveSummarizationCompactionStrategy over the extractive
// summariser behind a `summary-ms` delay, like a model call; 6 events kept). A summariser call is *wasted* when its
// compaction does not commit; it is *on a compacted range* when an event it was asked to summarise was already
// archived in the store when it was called. Writes docs/benchmarks/hot-session.md and prints it.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  DefaultSessionService,
  EventFilter,
  ExtractiveSummarizer,
  InMemorySessionRepository,
  Messages,
  PostgresSessionRepository,
  RecursiveSummarizationCompactionStrategy,
  RedisSessionRepository,
  SqliteSessionRepository,
  createDefaultLogger,
  type ChatClient,
  type CompactionRequest,
  type CompactionStrategy,
  type CompactionLock,
  type SessionRepository,
  InProcessCompactionLock,
} from 'session-compaction';
import { PostgresCompactionLock } from 'session-compaction/postgres';
import { RedisCompactionLock } from 'session-compaction/redis';
import { SqliteCompactionLock } from 'session-compaction/sqlite';
import { arg } from './support/args.js';
import { dropPostgresStore } from './support/postgres.js';
import { deleteRedisPrefix } from './support/redis.js';

const WRITERS = Number(arg('writers', '8'));
const ROUNDS = Number(arg('rounds', '25'));
const SUMMARY_MS = Number(arg('summary-ms', '5'));
const BACKENDS = arg('backends', 'memory,sqlite,postgres,redis').split(',');
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const logger = createDefaultLogger({ silent: true });
const prefix = () => `hot_${randomBytes(4).toString('hex')}`;

interface Store {
  repository: SessionRepository;
  /** The backend's cross-process compaction lock, one instance per writer (as each process has its own). */
  lock: () => CompactionLock;
  close: () => Promise<void>;
}

async function store(name: string): Promise<Store | null> {
  if (name === 'memory') {
    const shared = new InProcessCompactionLock();
    return { repository: new InMemorySessionRepository(), lock: () => shared, close: async () => {} };
  }
  if (name === 'sqlite') {
    // A file, as several processes would share it (WAL); every writer's service uses the one connection here.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hot-'));
    const repository = new SqliteSessionRepository({ path: path.join(dir, 'hot.db'), logger });
    const locks: SqliteCompactionLock[] = [];
    return {
      repository,
      lock: () => {
        const lock = new SqliteCompactionLock({ path: path.join(dir, 'hot.db') });
        locks.push(lock);
        return lock;
      },
      close: async () => {
        for (const lock of locks) await lock.close();
        await repository.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  if (name === 'postgres') {
    const pool = new pg.Pool({ connectionString: PG_URL, max: WRITERS + 2 });
    try {
      await pool.query('SELECT 1');
    } catch {
      await pool.end();
      console.error('PostgreSQL unreachable: skipped');
      return null;
    }
    const p = prefix();
    const repository = new PostgresSessionRepository({ pool, prefix: p, logger });
    return {
      repository,
      lock: () => new PostgresCompactionLock({ pool, prefix: p }),
      close: async () => {
        await repository.close();
        await dropPostgresStore(pool, p).catch(() => undefined);
        await pool.end();
      },
    };
  }
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
  } catch {
    client.disconnect();
    console.error('Redis unreachable: skipped');
    return null;
  }
  const p = prefix();
  const repository = new RedisSessionRepository({ client, prefix: p, logger });
  return {
    repository,
    lock: () => new RedisCompactionLock({ client, prefix: p }),
    close: async () => {
      await deleteRedisPrefix(client, p);
      await repository.close();
      client.disconnect();
    },
  };
}

interface Row {
  backend: string;
  shared: boolean;
  leased: boolean;
  policy: 'rebase' | 'skip';
  attempts: number;
  committed: number;
  rebased: number;
  lost: number;
  calls: number;
  wasted: number;
  onCompacted: number;
  eventsLost: number;
  duplicated: number;
}

async function run(backendName: string, policy: 'rebase' | 'skip', shared: boolean, leased = false): Promise<Row | null> {
  const s = await store(backendName);
  if (s === null) return null;
  const { repository } = s;
  try {
    const first = new DefaultSessionService(repository, { logger });
    const { id } = await first.create({ userId: 'hot' });
    const row: Row = {
      backend: backendName,
      shared,
      leased,
      policy,
      attempts: 0,
      committed: 0,
      rebased: 0,
      lost: 0,
      calls: 0,
      wasted: 0,
      onCompacted: 0,
      eventsLost: 0,
      duplicated: 0,
    };
    const extractive = new ExtractiveSummarizer();
    const appended: string[] = [];
    const options = { logger, conflictPolicy: policy };
    const sharedService = new DefaultSessionService(repository, options);
    // Summariser calls per service, settled when its compaction commits or is skipped.
    const pendingCalls = new Map<DefaultSessionService, number>();
    const watch = (service: DefaultSessionService) => {
      service.events.on('compactionCompleted', ({ rebased }) => {
        row.committed++;
        if (rebased) row.rebased++;
        pendingCalls.set(service, 0);
      });
      service.events.on('compactionSkipped', ({ reason }) => {
        if (reason === 'cas-conflict') row.lost++;
        row.wasted += pendingCalls.get(service) ?? 0;
        pendingCalls.set(service, 0);
      });
    };
    if (shared) watch(sharedService);
    const writer = async (w: number) => {
      const service = shared
        ? sharedService
        : new DefaultSessionService(repository, leased ? { ...options, compactionLock: s.lock() } : options);
      if (!shared) watch(service);
      let window: readonly string[] = [];
      const summariser: ChatClient = {
        model: 'extractive-delayed',
        call: async (request) => {
          row.calls++;
          pendingCalls.set(service, (pendingCalls.get(service) ?? 0) + 1);
          const archived = new Set(
            (await repository.findEvents(id, EventFilter.all())).filter((e) => e.archived).map((e) => e.id),
          );
          if (window.some((e) => archived.has(e))) row.onCompacted++;
          await sleep(SUMMARY_MS);
          return extractive.call(request);
        },
      };
      const inner = new RecursiveSummarizationCompactionStrategy({ chatClient: summariser, maxEventsToKeep: 6, overlapSize: 1 });
      const strategy: CompactionStrategy = {
        compact: (request: CompactionRequest) => {
          row.attempts++;
          window = request.events.filter((e) => !e.isSynthetic()).map((e) => e.id);
          return inner.compact(request);
        },
      };
      for (let r = 0; r < ROUNDS; r++) {
        appended.push((await service.appendMessage(id, Messages.user(`writer ${w} asks question ${r} about the deployment`))).id);
        appended.push(
          (await service.appendMessage(id, Messages.assistant(`answer ${r} for writer ${w}: roll back the canary`))).id,
        );
        await service.compact(id, (req) => req.events.length > 12, strategy);
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    const ids = (await repository.findEvents(id, EventFilter.all())).map((e) => e.id);
    const counts = new Map<string, number>();
    for (const x of ids) counts.set(x, (counts.get(x) ?? 0) + 1);
    row.eventsLost = appended.filter((a) => !counts.has(a)).length;
    row.duplicated = [...counts.values()].filter((n) => n > 1).length;
    return row;
  } finally {
    await s.close();
  }
}

const rows: Row[] = [];
for (const name of BACKENDS) {
  for (const [policy, shared] of [
    ['skip', true],
    ['rebase', true],
    ['skip', false],
    ['skip', 'leased'],
    ['rebase', 'leased'],
  ] as const) {
    const row = await run(name, policy, shared === true, shared === 'leased');
    if (row !== null) rows.push(row);
  }
  console.error(`${name} done`);
}
const pct = (a: number, b: number) => (b === 0 ? '—' : `${((100 * a) / b).toFixed(0)} %`);
const lines = [
  '# A hot session: 8 writers compacting one session',
  '',
  `Generated by \`node --import tsx benchmarks/hot-session.ts\` on ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}.`,
  `Load average (1 min) at the end: ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores.`,
  '',
  `${WRITERS} writers × ${ROUNDS} rounds on one session: append a question and an answer, then compact (trigger: more`,
  `than 12 active events; a summarising strategy whose summariser takes ${SUMMARY_MS} ms). "one service": the writers share`,
  'a DefaultSessionService (concurrent requests of one process: its per-session lock serialises compactions, appends',
  'race them); "one per writer": each its own (8 processes), without or with the backend\'s `compactionLock` (lease',
  'taken when the trigger fires, `waitMs` 0: a writer finding it held skips at once). An attempt is a strategy run;',
  'the version is checked again before each one, so a window another writer has just compacted is not summarised again.',
  '',
  '| backend | services | conflict policy | attempts | committed (rebased) | committed ÷ attempts | lost CAS | summariser calls | wasted (no commit) | on an already compacted range | events lost | duplicated |',
  '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.backend} | ${r.shared ? 'one service' : r.leased ? "one per writer, with the backend's compactionLock" : 'one per writer'} | ${r.policy}${r.policy === 'skip' ? ' (default)' : ''} | ${r.attempts} | ${r.committed} (${r.rebased}) | ${pct(r.committed, r.attempts)} | ${r.lost} | ${r.calls} | ${r.wasted} | ${r.onCompacted} | ${r.eventsLost} | ${r.duplicated} |`,
  ),
  '',
];
const out = lines.join('\n');
const dir = path.resolve('docs/benchmarks');
if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, 'hot-session.md'), out + '\n');
console.log(out);
process.exit(0);
