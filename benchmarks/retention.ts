// Retention at size while traffic goes on: `applyRetention` over 1,000 sessions × 500 events.
//
//   nice npx tsx benchmarks/retention.ts [--backends sqlite,postgres,redis] [--sessions 1000] [--events 500]
//        [--archived 480] [--batch 100] [--concurrency 2] [--pause 0] [--writers 4] [--writer-rate 25]
//        [--idle-touch 0.002] [--out docs/benchmarks/retention.md]
//
// Per backend:
// 1. Seeds --sessions sessions of --events events: the first --archived are archived (120 days old) under a
//    summary pair that covers them, the rest form the active window. Every tenth session is idle (its newest
//    event is 60 days old), the others were active yesterday.
// 2. Starts --writers writer processes, each with its own connection, appending to random sessions at
//    --writer-rate appends/s (a fraction --idle-touch of them to idle sessions, so some idle sessions are
//    revived mid-run and some appends race an erasure). A baseline of append latency is taken first.
// 3. Runs `applyRetention({ archivedEventsOlderThanMs: 90 days, sessionsIdleLongerThanMs: 30 days })` in
//    batches of --batch events with progress (waiting --pause ms after each), while the writers append; then
//    stops the writers.
// 4. Checks, and fails the run otherwise: every acknowledged append is in its session; every seeded active
//    event and every summary of a surviving session is there; no archived event is left; erased sessions are
//    idle ones nobody wrote to, with a tombstone; every refused append hit an erased session; the removed
//    events add up to sessions × archived. A second pass removes nothing.
// Writes docs/benchmarks/retention.md. PG_URL / REDIS_URL as in the tests.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Sqlite from 'better-sqlite3';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  createDefaultLogger,
  DefaultSessionService,
  EventFilter,
  Messages,
  PostgresSessionRepository,
  RedisSessionRepository,
  Session,
  SessionEvent,
  SqliteSessionRepository,
  type SessionRepository,
} from 'session-compaction';
import type { RetentionProgress, RetentionReport } from 'session-compaction/lifecycle';
import { isBatchAppendRepository, isErasureRepository } from 'session-compaction/spi';
import { syntheticMessages } from './src/scaling/syntheticSession.js';
import { mulberry32 } from './src/prng.js';
import { arg } from './support/args.js';
import { dropPostgresStore } from './support/postgres.js';
import { deleteRedisPrefix, redisKeys } from './support/redis.js';

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DAY = 86_400_000;
const SELF = fileURLToPath(import.meta.url);
const loadAtStart = os.loadavg()[0]!.toFixed(1);
const DEFAULT_OUT = fileURLToPath(new URL('../docs/benchmarks/retention.md', import.meta.url));

type Backend = 'sqlite' | 'postgres' | 'redis';
/** Where a backend's store is: everything a writer process needs to open its own connection. */
interface StoreLocation {
  backend: Backend;
  /** File path (SQLite) or URL. */
  location: string;
  prefix: string;
}

const logger = createDefaultLogger({ silent: true });

function openRepository(store: StoreLocation): { repository: SessionRepository; close(): Promise<void> } {
  switch (store.backend) {
    case 'sqlite': {
      const repository = new SqliteSessionRepository({
        path: store.location,
        prefix: store.prefix,
        logger,
        busyTimeoutMs: 30_000,
      });
      return { repository, close: () => repository.close() };
    }
    case 'postgres': {
      const repository = new PostgresSessionRepository({ connectionString: store.location, prefix: store.prefix, logger });
      return { repository, close: () => repository.close() };
    }
    case 'redis': {
      const client = new Redis(store.location);
      const repository = new RedisSessionRepository({ client, prefix: store.prefix, logger });
      return {
        repository,
        close: async () => {
          await client.quit();
        },
      };
    }
  }
}

const sessionId = (i: number) => `ret-${String(i).padStart(5, '0')}`;
const isIdle = (i: number) => i % 10 === 0;

// ---------------------------------------------------------------------------------------------------------
// Writer process: appends until told to stop, then reports every acknowledged and refused append.

interface WriterReport {
  writer: number;
  /** [sessionId, eventId, startedAt (epoch ms), latency ms] of every acknowledged append. */
  acknowledged: Array<[string, string, number, number]>;
  /** [sessionId, message] of every refused append. */
  refused: Array<[string, string]>;
}

async function writerMain(): Promise<void> {
  const store = JSON.parse(arg('store', '{}')) as StoreLocation;
  const writer = Number(arg('writer', '0'));
  const sessions = Number(arg('sessions', '1000'));
  const rate = Number(arg('writer-rate', '25'));
  const idleTouch = Number(arg('idle-touch', '0.002'));
  const { repository, close } = openRepository(store);
  const service = new DefaultSessionService(repository, { logger });
  const random = mulberry32(7919 * (writer + 1));
  const report: WriterReport = { writer, acknowledged: [], refused: [] };
  let stop = false;
  process.on('message', (m) => {
    if (m === 'stop') stop = true;
  });
  const idle = Array.from({ length: sessions }, (_, i) => i).filter(isIdle);
  const live = Array.from({ length: sessions }, (_, i) => i).filter((i) => !isIdle(i));
  const interval = rate > 0 ? 1000 / rate : 0;
  process.send!('ready');
  for (let n = 0; !stop; n++) {
    const pool = random() < idleTouch ? idle : live;
    const id = sessionId(pool[Math.floor(random() * pool.length)]!);
    const eventId = `w${writer}-${n}`;
    const startedAt = Date.now();
    const t0 = performance.now();
    try {
      await service.appendMessage(id, Messages.user(`writer ${writer} message ${n}: new booking question`), { id: eventId });
      report.acknowledged.push([id, eventId, startedAt, performance.now() - t0]);
    } catch (error) {
      report.refused.push([id, error instanceof Error ? error.message : String(error)]);
    }
    const wait = interval - (performance.now() - t0);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  await close();
  process.send!(report, () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------------------
// Main process.

interface Config {
  sessions: number;
  events: number;
  archived: number;
  batch: number;
  concurrency: number;
  pauseMs: number;
  writers: number;
  writerRate: number;
  idleTouch: number;
}

async function seed(repository: SessionRepository, config: Config, now: number): Promise<void> {
  const created = new Date(now - 150 * DAY);
  const archivedAt = now - 120 * DAY;
  const messages = syntheticMessages(config.events, 2024);
  const parallel = repository instanceof SqliteSessionRepository ? 1 : 4;
  let next = 0;
  const one = async (i: number) => {
    const id = sessionId(i);
    await repository.save(Session.create({ id, userId: `user-${i % 50}`, createdAt: created, expiresAt: null }));
    const activeAt = now - (isIdle(i) ? 60 : 1) * DAY;
    const events = messages.map((message, k) =>
      SessionEvent.create({
        sessionId: id,
        id: `e${k}`,
        message,
        timestamp: new Date(k < config.archived ? archivedAt + k : activeAt + k),
      }),
    );
    if (isBatchAppendRepository(repository)) await repository.appendEvents(id, events);
    else for (const e of events) await repository.appendEvent(e);
    const covered = events.slice(0, config.archived);
    const meta = { synthetic: true, compactionSource: 'retention-benchmark', coveredEventIds: covered.map((e) => e.id) };
    const summary = [
      SessionEvent.create({
        sessionId: id,
        id: 's-q',
        message: Messages.user('Summarize'),
        metadata: meta,
        timestamp: new Date(archivedAt),
      }),
      SessionEvent.create({
        sessionId: id,
        id: 's-a',
        message: Messages.assistant(`Summary of ${covered.length} events.`),
        metadata: meta,
        timestamp: new Date(archivedAt),
      }),
    ];
    const version = await repository.getEventVersion(id);
    const ok = await repository.compactEvents(id, covered, [...summary, ...events.slice(config.archived)], version);
    if (!ok) throw new Error(`seeding ${id}: compaction lost its CAS`);
  };
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < config.sessions) {
        const i = next++;
        await one(i);
        if ((i + 1) % 100 === 0) process.stderr.write(`  seeded ${i + 1}/${config.sessions}\n`);
      }
    }),
  );
}

function startWriter(
  store: StoreLocation,
  writer: number,
  config: Config,
): { child: ChildProcess; ready: Promise<void>; done: Promise<WriterReport> } {
  const child = fork(
    SELF,
    [
      '--writer-mode',
      '--store',
      JSON.stringify(store),
      '--writer',
      String(writer),
      '--sessions',
      String(config.sessions),
      '--writer-rate',
      String(config.writerRate),
      '--idle-touch',
      String(config.idleTouch),
    ],
    { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  let ready!: () => void;
  const readyPromise = new Promise<void>((resolve) => (ready = resolve));
  const done = new Promise<WriterReport>((resolve, reject) => {
    child.on('message', (m) => {
      if (m === 'ready') ready();
      else resolve(m as WriterReport);
    });
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`writer ${writer} exited with ${code}`));
    });
  });
  return { child, ready: readyPromise, done };
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface StorageFigure {
  label: string;
  before: string;
  after: string;
}

async function storage(store: StoreLocation): Promise<string> {
  if (store.backend === 'sqlite') {
    const db = new Sqlite(store.location, { readonly: true });
    try {
      const pageSize = db.pragma('page_size', { simple: true }) as number;
      const free = db.pragma('freelist_count', { simple: true }) as number;
      const wal = existsSync(`${store.location}-wal`) ? statSync(`${store.location}-wal`).size : 0;
      const mb = (n: number) => (n / 1e6).toFixed(1);
      return `file ${mb(statSync(store.location).size)} MB (${mb(free * pageSize)} MB in ${free} free pages), WAL ${mb(wal)} MB`;
    } finally {
      db.close();
    }
  }
  if (store.backend === 'postgres') {
    const client = new pg.Client({ connectionString: store.location });
    await client.connect();
    try {
      const { rows } = await client.query<{ size: string; live: string; dead: string }>(
        `SELECT pg_total_relation_size($1::regclass)::text AS size,
                COALESCE(n_live_tup, 0)::text AS live, COALESCE(n_dead_tup, 0)::text AS dead
           FROM pg_stat_user_tables WHERE relid = $1::regclass`,
        [`${store.prefix}_events`],
      );
      const r = rows[0]!;
      return `events table ${(Number(r.size) / 1e6).toFixed(1)} MB, ${r.live} live / ${r.dead} dead tuples`;
    } finally {
      await client.end();
    }
  }
  const client = new Redis(store.location);
  try {
    let bytes = 0;
    let keys = 0;
    for await (const batch of redisKeys(client, store.prefix)) {
      for (const key of batch) {
        bytes += Number((await client.call('MEMORY', 'USAGE', key)) ?? 0);
        keys++;
      }
    }
    return `${(bytes / 1e6).toFixed(1)} MB in ${keys} keys (MEMORY USAGE)`;
  } finally {
    await client.quit();
  }
}

interface Outcome {
  backend: Backend;
  seedMs: number;
  report: RetentionReport;
  rerun: RetentionReport;
  progressCalls: number;
  appends: { baseline: number[]; during: number[]; refused: number; acknowledged: number; revivedIdle: number };
  storage: StorageFigure;
  violations: string[];
}

async function verify(
  repository: SessionRepository,
  config: Config,
  report: RetentionReport,
  writers: readonly WriterReport[],
): Promise<{ violations: string[]; revivedIdle: number }> {
  const violations: string[] = [];
  const acknowledged = new Map<string, string[]>();
  for (const w of writers)
    for (const [id, eventId] of w.acknowledged) acknowledged.set(id, [...(acknowledged.get(id) ?? []), eventId]);
  const erased = new Set(report.erased.sessionIds);
  let revivedIdle = 0;
  for (let i = 0; i < config.sessions; i++) {
    const id = sessionId(i);
    const written = acknowledged.get(id) ?? [];
    const session = await repository.findById(id);
    if (session === null) {
      if (!erased.has(id)) violations.push(`${id} is gone but retention did not report erasing it`);
      if (!isIdle(i)) violations.push(`${id} was active yesterday and was erased`);
      if (written.length > 0) violations.push(`${id} was erased after ${written.length} acknowledged appends: lost`);
      if (isErasureRepository(repository) && (await repository.findTombstone(id)) === null)
        violations.push(`${id} was erased without a tombstone`);
      continue;
    }
    if (erased.has(id)) violations.push(`${id} is reported erased but still exists`);
    if (isIdle(i)) {
      if (written.length === 0) violations.push(`${id} was idle, nobody wrote to it, and it was not erased`);
      revivedIdle++;
    }
    const events = await repository.findEvents(id, EventFilter.all());
    const present = new Set(events.map((e) => e.id));
    const lost = written.filter((e) => !present.has(e));
    if (lost.length > 0) violations.push(`${id} lost ${lost.length} acknowledged appends: ${lost.slice(0, 3).join(', ')}`);
    for (let k = config.archived; k < config.events; k++)
      if (!present.has(`e${k}`)) violations.push(`${id} lost active event e${k}`);
    if (!present.has('s-q') || !present.has('s-a')) violations.push(`${id} lost its summary`);
    const left = events.filter((e) => e.archived && !e.isSynthetic()).length;
    if (left > 0) violations.push(`${id} still holds ${left} archived events older than the limit`);
  }
  for (const w of writers) {
    for (const [id, message] of w.refused) {
      if (!erased.has(id)) violations.push(`writer ${w.writer}: append to ${id} refused though it was not erased: ${message}`);
    }
  }
  const removed = report.archivedEventsRemoved + report.erased.archivedEvents;
  if (removed !== config.sessions * config.archived) {
    violations.push(`removed ${removed} archived events, expected ${config.sessions * config.archived}`);
  }
  return { violations, revivedIdle };
}

async function runBackend(backend: Backend, config: Config, dir: string): Promise<Outcome> {
  const tag = `ret_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const store: StoreLocation =
    backend === 'sqlite'
      ? { backend, location: path.join(dir, `${tag}.db`), prefix: 'ret' }
      : { backend, location: backend === 'postgres' ? PG_URL : REDIS_URL, prefix: tag };
  const { repository, close } = openRepository(store);
  try {
    const now = Date.now();
    process.stderr.write(`${backend}: seeding ${config.sessions} × ${config.events} events\n`);
    let t0 = performance.now();
    await seed(repository, config, now);
    const seedMs = performance.now() - t0;
    const before = await storage(store);

    const writers = Array.from({ length: config.writers }, (_, w) => startWriter(store, w, config));
    await Promise.all(writers.map((w) => w.ready));
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const retentionStart = Date.now();
    const service = new DefaultSessionService(repository, { logger });
    let progressCalls = 0;
    let lastLine = 0;
    const onProgress = (p: RetentionProgress) => {
      progressCalls++;
      if (performance.now() - lastLine > 5000) {
        lastLine = performance.now();
        process.stderr.write(
          `  ${backend}: ${p.sessionsScanned} sessions scanned, ${p.archivedEventsRemoved} archived events removed, ` +
            `${p.sessionsErased} idle sessions erased, ${p.batches} batches\n`,
        );
      }
    };
    t0 = performance.now();
    const report = await service.applyRetention(
      { archivedEventsOlderThanMs: 90 * DAY, sessionsIdleLongerThanMs: 30 * DAY },
      { batchSize: config.batch, concurrency: config.concurrency, pauseMs: config.pauseMs, onProgress },
    );
    const retentionEnd = Date.now();
    for (const w of writers) w.child.send('stop');
    const reports = await Promise.all(writers.map((w) => w.done));
    const rerun = await service.applyRetention({ archivedEventsOlderThanMs: 90 * DAY, sessionsIdleLongerThanMs: 30 * DAY });
    const after = await storage(store);
    const { violations, revivedIdle } = await verify(repository, config, report, reports);
    if (rerun.archivedEventsRemoved !== 0 || rerun.sessionsErased !== 0) {
      violations.push(`the second pass removed ${rerun.archivedEventsRemoved} events and ${rerun.sessionsErased} sessions`);
    }
    const all = reports.flatMap((r) => r.acknowledged);
    const latencies = (from: number, to: number) =>
      all
        .filter(([, , at]) => at >= from && at < to)
        .map(([, , , ms]) => ms)
        .sort((a, b) => a - b);
    void t0;
    return {
      backend,
      seedMs,
      report,
      rerun,
      progressCalls,
      appends: {
        baseline: latencies(0, retentionStart),
        during: latencies(retentionStart, retentionEnd),
        refused: reports.reduce((n, r) => n + r.refused.length, 0),
        acknowledged: all.length,
        revivedIdle,
      },
      storage: { label: backend, before, after },
      violations,
    };
  } finally {
    await cleanup(store);
    await close();
  }
}

/** Drops the run's PostgreSQL tables or Redis keys (a SQLite run's file goes with its temporary folder). */
async function cleanup(store: StoreLocation): Promise<void> {
  if (store.backend === 'postgres') {
    const client = new pg.Client({ connectionString: store.location });
    await client.connect();
    await dropPostgresStore(client, store.prefix);
    await client.end();
  } else if (store.backend === 'redis') {
    const client = new Redis(store.location);
    await deleteRedisPrefix(client, store.prefix);
    await client.quit();
  }
}

function markdown(config: Config, outcomes: readonly Outcome[]): string {
  const s = (ms: number) => (ms / 1000).toFixed(1);
  const f0 = (n: number) => Math.round(n).toLocaleString('en-US');
  const ms = (n: number) => (Number.isNaN(n) ? '–' : n.toFixed(1));
  const lines = [
    '# Retention benchmark',
    '',
    `Generated by \`nice npx tsx benchmarks/retention.ts --sessions ${config.sessions} --events ${config.events} --archived ${config.archived} ` +
      `--batch ${config.batch} --concurrency ${config.concurrency} --pause ${config.pauseMs} --writers ${config.writers} --writer-rate ${config.writerRate} --idle-touch ${config.idleTouch}\``,
    `on ${new Date().toISOString().slice(0, 10)} (${os.cpus().length} cores shared with other work, load average ${loadAtStart} at the start and ` +
      `${os.loadavg()[0]!.toFixed(1)} at the end, Node ${process.version}). ${config.sessions.toLocaleString('en-US')} sessions × ${config.events} events: ` +
      `${config.archived} archived (120 days old) under a summary pair, ${config.events - config.archived} active; every tenth`,
    'session idle for 60 days. Policy: `{ archivedEventsOlderThanMs: 90 days, sessionsIdleLongerThanMs: 30 days }`,',
    `batches of ${config.batch} events, ${config.concurrency} sessions at a time, ` +
      `${config.pauseMs > 0 ? `a pause of ${config.pauseMs} ms after each batch, ` : 'no pause between batches, '}` +
      `while ${config.writers} writer processes (own`,
    `connections) append at ${config.writerRate}/s each to random sessions (${config.idleTouch * 100}% of appends to idle sessions).`,
    '',
    '| backend | retention duration | archived events removed/s | sessions/s | batches | progress calls | idle sessions erased (revived by a write) | second pass |',
    '| ------- | ------------------ | ------------------------- | ---------- | ------- | -------------- | ----------------------------------------- | ----------- |',
  ];
  for (const o of outcomes) {
    const r = o.report;
    const removed = r.archivedEventsRemoved + r.erased.archivedEvents + r.erased.activeEvents + r.erased.summaries;
    lines.push(
      `| ${o.backend} | ${s(r.durationMs)} s | ${f0(removed / (r.durationMs / 1000))} (${f0(removed)} events) | ` +
        `${f0(r.sessionsScanned / (r.durationMs / 1000))} | ${f0(r.batches)} | ${o.progressCalls} | ` +
        `${r.sessionsErased} (${o.appends.revivedIdle}) | ${s(o.rerun.durationMs)} s, removed ${o.rerun.archivedEventsRemoved} |`,
    );
  }
  lines.push(
    '',
    '"Removed" counts archived events purged from surviving sessions plus every event of the erased idle sessions.',
    '',
    '## Traffic during the run',
    '',
    '| backend | appends acknowledged | lost | refused (raced an erasure) | append p50 / p99 before | append p50 / p99 during |',
    '| ------- | -------------------- | ---- | -------------------------- | ----------------------- | ----------------------- |',
  );
  for (const o of outcomes) {
    const a = o.appends;
    lines.push(
      `| ${o.backend} | ${f0(a.acknowledged)} | ${o.violations.filter((v) => v.includes('lost')).length} | ${a.refused} | ` +
        `${ms(percentile(a.baseline, 50))} / ${ms(percentile(a.baseline, 99))} ms | ${ms(percentile(a.during, 50))} / ${ms(percentile(a.during, 99))} ms |`,
    );
  }
  lines.push(
    '',
    'Checked after every run (the benchmark fails otherwise): every acknowledged append is in its session; every',
    'seeded active event and summary of a surviving session is there; no archived event is left; erased sessions',
    'are idle ones nobody wrote to, each with a tombstone; every refused append hit an erased session; the removed',
    'archived events add up to sessions × archived; a second pass removes nothing.',
    '',
    '## Storage before and after',
    '',
    'Retention deletes rows; it does not shrink files. See [data-lifecycle.md](../data-lifecycle.md#when-the-bytes-are-really-gone).',
    '',
    '| backend | seeding | before | after |',
    '| ------- | ------- | ------ | ----- |',
  );
  for (const o of outcomes) lines.push(`| ${o.backend} | ${s(o.seedMs)} s | ${o.storage.before} | ${o.storage.after} |`);
  lines.push('');
  return lines.join('\n');
}

async function main(): Promise<void> {
  const config: Config = {
    sessions: Number(arg('sessions', '1000')),
    events: Number(arg('events', '500')),
    archived: Number(arg('archived', '480')),
    batch: Number(arg('batch', '100')),
    concurrency: Number(arg('concurrency', '2')),
    pauseMs: Number(arg('pause', '0')),
    writers: Number(arg('writers', '4')),
    writerRate: Number(arg('writer-rate', '25')),
    idleTouch: Number(arg('idle-touch', '0.002')),
  };
  const backends = arg('backends', 'sqlite,postgres,redis').split(',') as Backend[];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'retention-bench-'));
  const outcomes: Outcome[] = [];
  try {
    for (const backend of backends) {
      const outcome = await runBackend(backend, config, dir);
      outcomes.push(outcome);
      const r = outcome.report;
      process.stdout.write(
        `${JSON.stringify({
          backend,
          seedMs: Math.round(outcome.seedMs),
          durationMs: Math.round(r.durationMs),
          sessionsScanned: r.sessionsScanned,
          archivedEventsRemoved: r.archivedEventsRemoved,
          sessionsErased: r.sessionsErased,
          erasedEvents: r.erased.archivedEvents + r.erased.activeEvents + r.erased.summaries,
          batches: r.batches,
          rerunMs: Math.round(outcome.rerun.durationMs),
          appends: outcome.appends.acknowledged,
          refused: outcome.appends.refused,
          storage: outcome.storage,
          violations: outcome.violations.slice(0, 20),
        })}\n`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (process.argv.includes('--no-write')) {
    process.stdout.write(markdown(config, outcomes));
  } else {
    writeFileSync(path.resolve(arg('out', DEFAULT_OUT)), markdown(config, outcomes));
  }
  const failed = outcomes.filter((o) => o.violations.length > 0);
  if (failed.length > 0) {
    for (const o of failed)
      process.stderr.write(`${o.backend}: ${o.violations.length} violations\n  ${o.violations.slice(0, 20).join('\n  ')}\n`);
    process.exit(1);
  }
}

if (process.argv.includes('--writer-mode')) {
  await writerMain();
} else {
  await main();
  process.exit(0);
}
