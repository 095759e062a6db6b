// The studio's Sessions view at 100,000 sessions, on SQLite (a file) and PostgreSQL (PG_URL): latency of the
// whole HTTP request (GET / and its keyset pages, a user search, an id-prefix search) through a running studio,
// p50 / p95 / max over --requests requests of each kind. Side by side, in the same run: the same page built
// without the store's listing (listSessionIds, then each session read on its own: what a store without
// SessionListingRepository, such as Redis, gets).
//
//   npm run bench:studio -- [--sessions 100000] [--requests 200]      (or: npx tsx benchmarks/studio-sessions.ts …)
//
// (The environment variables SESSIONS and REQUESTS, which earlier runs used, still set the defaults.)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import {
  createDefaultLogger,
  Messages,
  PostgresSessionRepository,
  SessionEvent,
  SqliteSessionRepository,
  type SessionRepository,
} from 'session-compaction';
import { encodeEvent } from 'session-compaction/spi';
import { startStudio, type RunningStudio } from '../cli/src/studio/startStudio.js';
import { listSessionPage } from '../cli/src/studio/views/sessionsView.js';
import { numberArg } from './support/args.js';
import { dropPostgresStore } from './support/postgres.js';

const SESSIONS = numberArg('sessions', process.env.SESSIONS ?? '100000');
const REQUESTS = numberArg('requests', process.env.REQUESTS ?? '200');
const logger = createDefaultLogger({ silent: true });
const USERS = Math.max(1, Math.floor(SESSIONS / 20));
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const dir = mkdtempSync(path.join(os.tmpdir(), 'studio-bench-'));

const pad = (n: number) => String(n).padStart(7, '0');
const sessionId = (n: number) => `s-${pad(n)}`;
const WORDS = 'the booking flight reservation baggage refund seat upgrade insurance payment'.split(' ');
const sentence = (n: number, k: number) =>
  Array.from({ length: 24 }, (_, i) => WORDS[(n * 7 + k * 3 + i) % WORDS.length]).join(' ');

/** Session `n`'s 10 events (a few hundred tokens): every other session has its first 4 archived. */
function eventsOf(n: number): SessionEvent[] {
  const id = sessionId(n);
  return Array.from({ length: 10 }, (_, k) =>
    SessionEvent.create({
      sessionId: id,
      id: `e${k}`,
      message: k % 2 === 0 ? Messages.user(sentence(n, k)) : Messages.assistant(sentence(n, k)),
      timestamp: new Date(Date.UTC(2026, 0, 1) + n * 1000 + k),
      archived: n % 2 === 0 && k < 4,
    }),
  );
}

const userOf = (n: number) => `user-${pad(n % USERS)}`;

/**
 * SESSIONS sessions, 20 per user, written as rows in bulk (one transaction; appendEvents per session would take
 * most of an hour on PostgreSQL): the rows are what the repository writes, through the shared event codec.
 */
function seedSqlite(file: string): void {
  const started = Date.now();
  const db = new Database(file);
  db.pragma('synchronous = OFF');
  const session = db.prepare(
    "INSERT INTO session_compaction_sessions (id, user_id, created_at, expires_at, metadata, event_version) VALUES (?, ?, ?, NULL, '{}', 10)",
  );
  const event = db.prepare(
    `INSERT INTO session_compaction_events (session_id, id, timestamp, message_type, text, data, synthetic, archived, branch, metadata)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  db.transaction(() => {
    for (let n = 0; n < SESSIONS; n++) {
      session.run(sessionId(n), userOf(n), Date.UTC(2026, 0, 1) + n * 1000);
      for (const e of eventsOf(n).map((e) => encodeEvent(e))) {
        event.run(
          e.sessionId,
          e.id,
          e.timestamp,
          e.messageType,
          e.text,
          e.data,
          e.synthetic ? 1 : 0,
          e.archived ? 1 : 0,
          e.branch,
          e.metadata,
        );
      }
    }
  })();
  db.close();
  console.log(`  seeded ${SESSIONS} sessions in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

async function seedPostgres(pool: pg.Pool, prefix: string): Promise<void> {
  const started = Date.now();
  const BATCH = 1000;
  for (let from = 0; from < SESSIONS; from += BATCH) {
    const ns = Array.from({ length: Math.min(BATCH, SESSIONS - from) }, (_, i) => from + i);
    await pool.query(
      `INSERT INTO ${prefix}_sessions (id, user_id, created_at, event_version) SELECT id, u, c, 10 FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS x(id, u, c)`,
      [ns.map(sessionId), ns.map(userOf), ns.map((n) => new Date(Date.UTC(2026, 0, 1) + n * 1000))],
    );
    const rows = ns.flatMap((n) => eventsOf(n).map((e) => encodeEvent(e)));
    await pool.query(
      `INSERT INTO ${prefix}_events (session_id, id, message_type, text, text_lc, data, synthetic, archived, branch, metadata, "timestamp")
       SELECT s, i, t, x, lower(x), d::jsonb, syn, arc, br, m::jsonb, ts
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::bool[], $8::text[], $9::text[], $10::timestamptz[])
         AS u(s, i, t, x, d, syn, arc, br, m, ts)`,
      [
        rows.map((e) => e.sessionId),
        rows.map((e) => e.id),
        rows.map((e) => e.messageType),
        rows.map((e) => e.text),
        rows.map((e) => e.data),
        rows.map((e) => e.synthetic),
        rows.map((e) => e.archived),
        rows.map((e) => e.branch),
        rows.map((e) => e.metadata),
        rows.map((e) => new Date(e.timestamp)),
      ],
    );
  }
  await pool.query(`ANALYZE ${prefix}_sessions`);
  await pool.query(`ANALYZE ${prefix}_events`);
  console.log(`  seeded ${SESSIONS} sessions in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** The bulk rows read back through the repository as the events they were made from. */
async function check(repo: SessionRepository): Promise<void> {
  const n = SESSIONS - 2;
  const read = await repo.findEvents(sessionId(n));
  const expected = eventsOf(n);
  if (read.length !== 10 || read.some((e, i) => e.text !== expected[i]!.text || e.archived !== expected[i]!.archived)) {
    throw new Error('bulk rows do not read back as the events they encode');
  }
}

function stats(ms: number[]): string {
  const t = [...ms].sort((a, b) => a - b);
  const q = (p: number) => t[Math.min(t.length - 1, Math.ceil(p * t.length) - 1)]!;
  return `p50 ${q(0.5).toFixed(1)} ms  p95 ${q(0.95).toFixed(1)} ms  max ${t[t.length - 1]!.toFixed(1)} ms`;
}

/** GET `paths(i)` REQUESTS times through the studio; checks each page lists sessions. */
async function measure(studio: RunningStudio, paths: (i: number) => string): Promise<number[]> {
  const times: number[] = [];
  for (let i = -10; i < REQUESTS; i++) {
    const started = performance.now();
    const response = await fetch(`${studio.origin}${paths(Math.max(0, i))}`, { headers: { 'X-Studio-Token': studio.token } });
    const body = await response.text();
    const elapsed = performance.now() - started;
    if (response.status !== 200 || !body.includes('data-session=')) throw new Error(`${paths(i)}: ${response.status}`);
    if (i >= 0) times.push(elapsed);
  }
  return times;
}

const random = (i: number) => (i * 7919 + 13) % SESSIONS;
const KINDS: [string, (i: number) => string][] = [
  ['first page', () => '/'],
  ['a page deep in the store (keyset cursor)', (i) => `/?after=${sessionId(random(i))}`],
  ['a user\u2019s sessions', (i) => `/?user=user-${pad(random(i) % USERS)}`],
  ['an id prefix', (i) => `/?id=s-${pad(random(i)).slice(0, 5)}`],
];

async function run(name: string, url: string): Promise<void> {
  for (const [label, paths] of KINDS) {
    const studio = await startStudio({ url, logger });
    try {
      console.log(`${name.padEnd(10)} ${label.padEnd(44)} ${stats(await measure(studio, paths))}`);
    } finally {
      await studio.close();
    }
  }
  // Side by side, without HTTP and HTML: the page from the store's listing, and from listSessionIds and
  // per-session reads (the listing hidden), on the same random deep pages.
  const studio = await startStudio({ url, logger });
  try {
    const ctx = studio.context;
    const hidden = new Proxy(ctx.repository, {
      get: (target, key) => (key === 'listSessions' ? undefined : Reflect.get(target, key, target)),
    });
    // Each variant on pages of its own, none read before in this run (a page read before is in the caches).
    for (const [label, repository, offset] of [
      ['deep page, listSessions (no HTTP)', ctx.repository, 1],
      ['deep page, listSessionIds + reads (no HTTP)', hidden, 2],
    ] as const) {
      const times: number[] = [];
      for (let i = -10; i < REQUESTS; i++) {
        const started = performance.now();
        const page = await listSessionPage(
          { ...ctx, repository },
          { cursor: sessionId(random(Math.max(0, i) + offset * (REQUESTS + 10))), userId: null, idPrefix: null },
        );
        if (page.sessions.length === 0) throw new Error('empty page');
        if (i >= 0) times.push(performance.now() - started);
      }
      console.log(`${name.padEnd(10)} ${label.padEnd(44)} ${stats(times)}`);
    }
  } finally {
    await studio.close();
  }
}

console.log(`studio Sessions view: ${SESSIONS} sessions, 10 events each, ${REQUESTS} requests per kind, 50 sessions a page`);
try {
  const file = path.join(dir, 'studio.db');
  const sqlite = new SqliteSessionRepository({ path: file, logger });
  await sqlite.migrate();
  await sqlite.close();
  console.log('sqlite');
  seedSqlite(file);
  const reopened = new SqliteSessionRepository({ path: file, logger });
  await check(reopened);
  await reopened.close();
  await run('sqlite', `sqlite:${file}`);

  const prefix = `studio_bench_${Date.now().toString(36)}`;
  const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  const postgres = new PostgresSessionRepository({ pool, prefix, logger });
  console.log('postgres');
  try {
    await postgres.migrate();
    await seedPostgres(pool, prefix);
    await check(postgres);
    await run('postgres', `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}prefix=${prefix}`);
  } finally {
    await dropPostgresStore(pool, prefix);
    await pool.end();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
