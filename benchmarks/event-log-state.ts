// Per-call latency of getEventLogState — what Bm25Retriever reads before every search — on one session of
// N events, SQLite (a file) and PostgreSQL (PG_URL, default as in the tests): p50 / p90 / p99 over --calls calls.
//
//   npx tsx benchmarks/event-log-state.ts [--sizes 10000,100000] [--calls 2000]
//
// (The environment variables SIZES and CALLS, which earlier runs used, still set the defaults.)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  createDefaultLogger,
  Messages,
  PostgresSessionRepository,
  Session,
  SessionEvent,
  SqliteSessionRepository,
  type SessionRepository,
} from 'session-compaction';
import type { BatchAppendRepository, EventLogStateRepository } from 'session-compaction/spi';
import { arg, numberArg } from './support/args.js';
import { dropPostgresStore } from './support/postgres.js';

/** Both built-in stores measured here have both capabilities. */
type MeasuredRepository = SessionRepository & BatchAppendRepository & EventLogStateRepository;

const sizes = arg('sizes', process.env.SIZES ?? '10000,100000')
  .split(',')
  .map(Number);
const calls = numberArg('calls', process.env.CALLS ?? '2000');
const logger = createDefaultLogger({ silent: true });
const dir = mkdtempSync(path.join(os.tmpdir(), 'event-log-state-'));

async function fill(repo: MeasuredRepository, id: string, n: number): Promise<void> {
  await repo.save(Session.create({ id, userId: 'u' }));
  for (let k = 0; k < n; k += 1000) {
    const batch: SessionEvent[] = [];
    for (let j = k; j < Math.min(n, k + 1000); j++)
      batch.push(SessionEvent.create({ sessionId: id, id: `e${j}`, message: Messages.user(`message number ${j} about things`) }));
    await repo.appendEvents(id, batch);
  }
}

async function time(repo: MeasuredRepository, id: string): Promise<string> {
  for (let i = 0; i < 200; i++) await repo.getEventLogState(id);
  const t: number[] = [];
  for (let i = 0; i < calls; i++) {
    const s = process.hrtime.bigint();
    await repo.getEventLogState(id);
    t.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  t.sort((a, b) => a - b);
  const q = (p: number) => t[Math.floor(p * (t.length - 1))]!.toFixed(3);
  return `p50 ${q(0.5)} ms  p90 ${q(0.9)} ms  p99 ${q(0.99)} ms  state ${JSON.stringify(await repo.getEventLogState(id))}`;
}

try {
  for (const n of sizes) {
    const file = path.join(dir, `${n}.db`);
    const sqlite = new SqliteSessionRepository({ path: file, logger, synchronous: 'NORMAL' });
    await fill(sqlite, 's', n);
    console.log(`sqlite   ${String(n).padStart(6)} events: ${await time(sqlite, 's')}`);
    await sqlite.close();

    const pool = new pg.Pool({ connectionString: process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test', max: 2 });
    const prefix = `m_${Date.now().toString(36)}`;
    try {
      const repo = new PostgresSessionRepository({ pool, prefix, logger });
      await fill(repo, 's', n);
      await pool.query(`ANALYZE ${prefix}_events`);
      console.log(`postgres ${String(n).padStart(6)} events: ${await time(repo, 's')}`);
    } finally {
      await dropPostgresStore(pool, prefix);
      await pool.end();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
