// Repository throughput and latency: in-memory, SQLite (when present), PostgreSQL and Redis on this machine.
//
//   npx tsx benchmarks/repositories.ts [--archived 100000] [--backends memory,sqlite,postgres,redis]
//
// Per backend: sequential appends/s on one session, appends/s with 32 sessions written concurrently,
// findEvents(active()) and compactEvents latency (p50/p95) on a session with a 20-event window and 1,000
// archived events, and compaction latency with 100 vs 100,000 archived events (the ratio must stay near 1:
// compaction touches only the active window). Prints a Markdown table and writes docs/benchmarks/repositories.md.
// PostgreSQL and Redis come from PG_URL / REDIS_URL (defaults as in the tests); an unreachable one is skipped.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  EventFilter,
  InMemorySessionRepository,
  Messages,
  PostgresSessionRepository,
  RedisSessionRepository,
  Session,
  SessionEvent,
  SqliteSessionRepository,
  type SessionRepository,
} from 'session-compaction';
import { arg } from './support/args.js';
import { dropPostgresStore } from './support/postgres.js';
import { deleteRedisPrefix } from './support/redis.js';

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const LARGE_ARCHIVE = Number(arg('archived', '100000'));
const BACKENDS = arg('backends', 'memory,sqlite,postgres,redis').split(',');

interface Backend {
  name: string;
  repo: SessionRepository;
  cleanup: () => Promise<void>;
  server?: string;
}

interface Row {
  backend: string;
  appendsSequential: number;
  appendsConcurrent: number;
  findActive: [number, number];
  compact: [number, number];
  compactSmallArchive: number;
  compactLargeArchive: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
function p50p95(samples: number[]): [number, number] {
  const s = [...samples].sort((a, b) => a - b);
  return [percentile(s, 50), percentile(s, 95)];
}

let counter = 0;
const sessionId = (label: string) => `bench-${label}-${Date.now().toString(36)}-${counter++}`;
const event = (sid: string, text: string, i: number) =>
  SessionEvent.create({
    sessionId: sid,
    message: i % 2 === 0 ? Messages.user(text) : Messages.assistant(text),
  });
const TEXT = 'The quick brown fox jumps over the lazy dog while the assistant explains the plan. '.repeat(3);

async function newSession(repo: SessionRepository, label: string): Promise<string> {
  const s = await repo.save(Session.create({ id: sessionId(label), userId: 'bench' }));
  return s.id;
}

/**
 * Fills the archive through the SPI in batches: compactEvents archives events the log does not hold yet
 * (the repository contract: the log becomes the old archive, then `archived`, then `retained`), so 100,000 archived events
 * take a few hundred statements instead of 100,000 appends.
 */
async function fillArchive(repo: SessionRepository, sid: string, n: number): Promise<void> {
  for (let done = 0; done < n;) {
    const batch = Array.from({ length: Math.min(5000, n - done) }, (_, i) => event(sid, `archived ${done + i} ${TEXT}`, i));
    const window = await repo.findEvents(sid, EventFilter.active());
    const ok = await repo.compactEvents(sid, batch, window, await repo.getEventVersion(sid));
    if (!ok) throw new Error('fillArchive: lost a CAS race on a private session');
    done += batch.length;
  }
}

/** One compaction step as the service performs it: 10 new events arrive, the 10 oldest of the window are archived. */
async function compactionSamples(repo: SessionRepository, sid: string, iterations: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    for (let k = 0; k < 10; k++) await repo.appendEvent(event(sid, `new ${i}.${k} ${TEXT}`, k));
    const version = await repo.getEventVersion(sid);
    const window = await repo.findEvents(sid, EventFilter.active());
    const t = performance.now();
    const ok = await repo.compactEvents(sid, window.slice(0, 10), window.slice(10), version);
    samples.push(performance.now() - t);
    if (!ok) throw new Error('compactionSamples: lost a CAS race on a private session');
  }
  return samples;
}

async function measure(b: Backend): Promise<Row> {
  const { repo } = b;
  // Warm-up: schema creation, script loading, JIT.
  const warm = await newSession(repo, 'warm');
  for (let i = 0; i < 20; i++) await repo.appendEvent(event(warm, TEXT, i));
  await compactionSamples(repo, warm, 3);

  const seqSession = await newSession(repo, 'seq');
  const seqN = b.name === 'memory' ? 20_000 : 2_000;
  let t = performance.now();
  for (let i = 0; i < seqN; i++) await repo.appendEvent(event(seqSession, TEXT, i));
  const appendsSequential = seqN / ((performance.now() - t) / 1000);

  const sessions = await Promise.all(Array.from({ length: 32 }, () => newSession(repo, 'conc')));
  const perSession = b.name === 'memory' ? 600 : 60;
  t = performance.now();
  await Promise.all(
    sessions.map(async (sid) => {
      for (let i = 0; i < perSession; i++) await repo.appendEvent(event(sid, TEXT, i));
    }),
  );
  const appendsConcurrent = (32 * perSession) / ((performance.now() - t) / 1000);

  const readSession = await newSession(repo, 'read');
  await fillArchive(repo, readSession, 1000);
  for (let i = 0; i < 20; i++) await repo.appendEvent(event(readSession, TEXT, i));
  const reads: number[] = [];
  for (let i = 0; i < 200; i++) {
    const s = performance.now();
    const window = await repo.findEvents(readSession, EventFilter.active());
    reads.push(performance.now() - s);
    if (window.length !== 20) throw new Error(`expected a 20-event window, got ${window.length}`);
  }
  const compactions = await compactionSamples(repo, readSession, 100);

  const small = await newSession(repo, 'small');
  await fillArchive(repo, small, 100);
  for (let i = 0; i < 20; i++) await repo.appendEvent(event(small, TEXT, i));
  const large = await newSession(repo, 'large');
  await fillArchive(repo, large, LARGE_ARCHIVE);
  for (let i = 0; i < 20; i++) await repo.appendEvent(event(large, TEXT, i));
  // Interleaved, so load on the machine affects both alike.
  const smallSamples: number[] = [];
  const largeSamples: number[] = [];
  for (let round = 0; round < 5; round++) {
    smallSamples.push(...(await compactionSamples(repo, small, 10)));
    largeSamples.push(...(await compactionSamples(repo, large, 10)));
  }
  const archivedLarge = (await repo.findEvents(large, EventFilter.all())).filter((e) => e.archived).length;
  if (archivedLarge < LARGE_ARCHIVE) throw new Error(`large session holds ${archivedLarge} archived events`);

  return {
    backend: b.server ? `${b.name} (${b.server})` : b.name,
    appendsSequential,
    appendsConcurrent,
    findActive: p50p95(reads),
    compact: p50p95(compactions),
    compactSmallArchive: p50p95(smallSamples)[0],
    compactLargeArchive: p50p95(largeSamples)[0],
  };
}

async function openBackend(name: string): Promise<Backend | null> {
  const tag = `bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  switch (name) {
    case 'memory':
      return { name, repo: new InMemorySessionRepository(), cleanup: async () => {} };
    case 'sqlite': {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'sc-bench-'));
      const repo = new SqliteSessionRepository({ path: path.join(dir, 'bench.db') });
      return { name, repo, server: 'file, WAL', cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
    }
    case 'postgres': {
      const pool = new pg.Pool({ connectionString: PG_URL, max: 40 });
      try {
        const version = (await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v.split(
          ' ',
        )[0]!;
        const repo = new PostgresSessionRepository({ pool, prefix: tag });
        return {
          name,
          repo,
          server: `PostgreSQL ${version}`,
          cleanup: async () => {
            await dropPostgresStore(pool, tag);
            await pool.end();
          },
        };
      } catch (error) {
        console.error(`postgres skipped: ${(error as Error).message}`);
        await pool.end();
        return null;
      }
    }
    case 'redis': {
      const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
      try {
        await client.connect();
        const info = await client.info('server');
        const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '?';
        const repo = new RedisSessionRepository({ client, prefix: tag });
        return {
          name,
          repo,
          server: `Redis ${version}`,
          cleanup: async () => {
            await deleteRedisPrefix(client, tag);
            await client.quit();
          },
        };
      } catch (error) {
        console.error(`redis skipped: ${(error as Error).message}`);
        client.disconnect();
        return null;
      }
    }
    default:
      throw new Error(`unknown backend ${name}`);
  }
}

const f0 = (n: number) => Math.round(n).toLocaleString('en-US');
const f2 = (n: number) => (n < 0.1 ? n.toFixed(3) : n.toFixed(2));

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (const name of BACKENDS) {
    const b = await openBackend(name);
    if (b === null) continue;
    try {
      console.error(`measuring ${name}…`);
      rows.push(await measure(b));
    } finally {
      await b.repo.close?.();
      await b.cleanup();
    }
  }
  const header = [
    '| backend | appends/s (1 session) | appends/s (32 sessions) | findEvents(active()) p50 / p95 ms | compactEvents p50 / p95 ms | ' +
      `compaction p50 ms, 100 archived | compaction p50 ms, ${f0(LARGE_ARCHIVE)} archived | ratio |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  const lines = rows.map(
    (r) =>
      `| ${r.backend} | ${f0(r.appendsSequential)} | ${f0(r.appendsConcurrent)} | ${f2(r.findActive[0])} / ${f2(r.findActive[1])} | ` +
      `${f2(r.compact[0])} / ${f2(r.compact[1])} | ${f2(r.compactSmallArchive)} | ${f2(r.compactLargeArchive)} | ` +
      `${(r.compactLargeArchive / r.compactSmallArchive).toFixed(2)} |`,
  );
  const table = [...header, ...lines].join('\n');
  const cpus = os.cpus();
  const machine =
    `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
    `Node ${process.version}, ${os.platform()} ${os.release()}; load average at the end ${os.loadavg()[0]!.toFixed(1)}`;
  console.log(table);
  console.log(`\n${machine}`);
  const doc = `# Repository benchmark

Produced by \`npx tsx benchmarks/repositories.ts\` on ${new Date().toISOString().slice(0, 10)}; ${machine}.
The servers run on the same machine (loopback), with their default configuration (PostgreSQL commits
synchronously, so every append waits for a WAL flush).

- appends/s (1 session): sequential \`appendEvent\` calls on one session, each awaited.
- appends/s (32 sessions): 32 sessions written concurrently, one awaited append at a time per session.
- findEvents(active()): a 20-event window over 1,000 archived events.
- compactEvents: the write alone (10 events archived, 20 retained), after the service's version and window reads.
- Compaction with 100 vs ${f0(LARGE_ARCHIVE)} archived events: the same step on two sessions whose archives differ
  by three orders of magnitude; a ratio near 1 shows that compaction touches only the active window.

${table}
`;
  mkdirSync(new URL('../docs/benchmarks/', import.meta.url), { recursive: true });
  writeFileSync(new URL('../docs/benchmarks/repositories.md', import.meta.url), doc);
}

await main();
