// Moving a store between backends with `session-compaction copy`, at full size.
//
//   npx tsx benchmarks/copy-migration.ts [--sessions 1000] [--events 200] [--concurrency 4]
//
// 1. Fills a SQLite file with --sessions sessions of --events appended events each, compacted as they grow
//    (turn windows and additive summaries: archived events, summaries, versions above the event count).
// 2. copy SQLite → PostgreSQL → Redis → SQLite through the CLI (each hop verifies itself), then
//    verify --all on the final file, then compares the final file with the original session by session.
// 3. Kill and resume: a `copy` SQLite → PostgreSQL child process is killed with SIGKILL once about half of
//    the events are in the target, run again, and the target compared with the source.
// Writes docs/benchmarks/copy-migration.md. PG_URL / REDIS_URL as in the tests.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { PostgresSessionRepository, SqliteSessionRepository, type SessionRepository } from 'session-compaction';
import { compareSnapshots } from '../cli/src/admin/compareSessions.js';
import { collectSessionIds } from '../cli/src/admin/sessionIds.js';
import { readSnapshot } from '../cli/src/admin/sessionSnapshot.js';
import { forEachConcurrently } from '../cli/src/admin/forEachConcurrently.js';
import { main } from '../cli/src/main.js';
import { populateStore } from '../test/support/populateStore.js';
import { arg } from './support/args.js';
import { dropPostgresStore } from './support/postgres.js';
import { deleteRedisPrefix } from './support/redis.js';

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SESSIONS = Number(arg('sessions', '1000'));
const EVENTS = Number(arg('events', '200'));
const CONCURRENCY = arg('concurrency', '4');
const MAIN = fileURLToPath(new URL('../cli/src/main.ts', import.meta.url));
const OUT = fileURLToPath(new URL('../docs/benchmarks/copy-migration.md', import.meta.url));

const withPrefix = (url: string, prefix: string) => `${url}${url.includes('?') ? '&' : '?'}prefix=${prefix}`;
const seconds = (ms: number) => (ms / 1000).toFixed(1);

async function cli(...args: string[]): Promise<{ code: number; report: Record<string, unknown>; ms: number }> {
  let stdout = '';
  let stderr = '';
  const started = performance.now();
  const code = await main(['node', 'session-compaction', ...args, '--json', '--no-progress'], {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    stderrIsTTY: false,
  });
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`session-compaction ${args.join(' ')} exited ${code}: ${stdout}${stderr}`);
  return { code, report: JSON.parse(stdout) as Record<string, unknown>, ms };
}

async function sameStores(
  a: SessionRepository,
  b: SessionRepository,
): Promise<{ sessions: number; events: number; mismatches: number }> {
  const ids = await collectSessionIds(a);
  const other = new Set(await collectSessionIds(b));
  let events = 0;
  let mismatches = Math.abs(other.size - ids.length);
  await forEachConcurrently(ids, 8, async (id) => {
    const source = (await readSnapshot(a, id))!;
    events += source.events.length;
    if (!other.has(id) || compareSnapshots(source, await readSnapshot(b, id)) !== null) mismatches++;
  });
  return { sessions: ids.length, events, mismatches };
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'copy-migration-'));
const tag = `cm_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const pgUrl = withPrefix(PG_URL, tag);
const pgUrl2 = withPrefix(PG_URL, `${tag}_k`);
const redisUrl = withPrefix(REDIS_URL, tag);
const source = path.join(dir, 'source.db');
const final = path.join(dir, 'final.db');
const lines: string[] = [];
const log = (line: string) => {
  console.log(line);
  lines.push(line);
};

try {
  let started = performance.now();
  const seed = new SqliteSessionRepository({ path: source, synchronous: 'NORMAL' });
  await populateStore(seed, {
    sessions: SESSIONS,
    events: EVENTS,
    onSession: (i) => i % 100 === 99 && process.stderr.write(`populated ${i + 1}\n`),
  });
  await seed.close();
  const populateMs = performance.now() - started;

  const hops: { from: string; to: string; report: Record<string, unknown>; ms: number }[] = [];
  for (const [name, from, to] of [
    ['SQLite → PostgreSQL', `sqlite:${source}`, pgUrl],
    ['PostgreSQL → Redis', pgUrl, redisUrl],
    ['Redis → SQLite', redisUrl, `sqlite:${final}`],
  ] as const) {
    const run = await cli('copy', '--from', from, '--to', to, '--concurrency', CONCURRENCY);
    hops.push({ from: name.split(' → ')[0]!, to: name.split(' → ')[1]!, report: run.report, ms: run.ms });
    process.stderr.write(`${name}: ${seconds(run.ms)} s\n`);
  }
  const verify = await cli('verify', '--all', '--url', `sqlite:${final}`);
  const a = new SqliteSessionRepository({ path: source });
  const b = new SqliteSessionRepository({ path: final });
  started = performance.now();
  const endToEnd = await sameStores(a, b);
  const compareMs = performance.now() - started;

  // Kill half way and resume, SQLite → PostgreSQL.
  const child = spawn(
    process.execPath,
    [
      // The library and the bench by their sources, as in the parent process.
      '--conditions=session-compaction-source',
      '--import',
      'tsx',
      MAIN,
      'copy',
      '--from',
      `sqlite:${source}`,
      '--to',
      pgUrl2,
      '--concurrency',
      CONCURRENCY,
      '--no-progress',
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_c, signal) => resolve(signal)));
  const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
  const killStarted = performance.now();
  let atKill = 0;
  while (child.exitCode === null) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    try {
      atKill = Number((await pool.query(`SELECT count(*) AS n FROM ${tag}_k_events`)).rows[0].n);
    } catch {
      continue;
    }
    if (atKill >= endToEnd.events / 2) {
      child.kill('SIGKILL');
      break;
    }
  }
  const signal = await exited;
  const firstRunMs = performance.now() - killStarted;
  const resumed = await cli('copy', '--from', `sqlite:${source}`, '--to', pgUrl2, '--concurrency', CONCURRENCY);
  const killedTarget = new PostgresSessionRepository({ connectionString: PG_URL, prefix: `${tag}_k` });
  const afterKill = await sameStores(a, killedTarget);
  const totalInTarget = Number((await pool.query(`SELECT count(*) AS n FROM ${tag}_k_events`)).rows[0].n);
  await pool.end();
  await killedTarget.close();
  await a.close();
  await b.close();

  const v = verify.report as { ok: boolean; sessions: number; events: number; violations: number };
  const r = resumed.report as { written: number; resumed: number; unchanged: number; eventsAppended: number; ok: boolean };
  log('# Copying a store between backends');
  log('');
  log(
    `Generated by \`npx tsx benchmarks/copy-migration.ts --sessions ${SESSIONS} --events ${EVENTS} --concurrency ${CONCURRENCY}\` on ${new Date().toISOString().slice(0, 10)}`,
  );
  log(
    `(${os.cpus().length} CPU cores shared with other work, load average ${os.loadavg()[0]!.toFixed(1)} at the end; PostgreSQL and Redis on the same machine).`,
  );
  log('');
  log(
    `Source: a SQLite file with ${SESSIONS} sessions × ${EVENTS} appended events, compacted as they grew (turn windows, additive summaries), ` +
      `${endToEnd.events} events stored in total (archived events and summaries included); filling it took ${seconds(populateMs)} s.`,
  );
  log('');
  log('| hop | sessions | events appended | copy | verification (read both sides, compare) | mismatches |');
  log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const h of hops) {
    const rep = h.report as {
      sessions: number;
      eventsAppended: number;
      copyMs: number;
      verifyMs: number;
      verification: { mismatches: unknown[] };
    };
    log(
      `| ${h.from} → ${h.to} | ${rep.sessions} | ${rep.eventsAppended} | ${seconds(rep.copyMs)} s | ${seconds(rep.verifyMs)} s | ${rep.verification.mismatches.length} |`,
    );
  }
  log('');
  log(
    `- \`verify --all\` on the final SQLite file: ${v.ok ? 'OK' : 'FAILED'}, ${v.sessions} sessions, ${v.events} events, ${v.violations} violations, ${seconds(verify.ms)} s.`,
  );
  log(
    `- Final file against the original, session by session (ids, order, archived flags, every field, version not lower): ${endToEnd.mismatches} mismatches in ${endToEnd.sessions} sessions (${seconds(compareMs)} s).`,
  );
  log(
    `- Kill and resume (SQLite → PostgreSQL): the first \`copy\` was killed with ${signal ?? 'no signal (it finished first)'} after ${seconds(firstRunMs)} s with ${atKill} of ${endToEnd.events} events in the target; ` +
      `the second run took ${seconds(resumed.ms)} s (${r.written} sessions written, ${r.resumed} resumed, ${r.unchanged} unchanged, ${r.eventsAppended} events appended) and verified ${r.ok ? 'OK' : 'FAILED'}; ` +
      `the target then held ${totalInTarget} events for ${endToEnd.events} in the source, ${afterKill.mismatches} mismatches.`,
  );
  writeFileSync(OUT, `${lines.join('\n')}\n`);
} finally {
  // Also after a failed hop: both PostgreSQL stores (`<tag>` and `<tag>_k`) share the prefix, and the CLI wrote them.
  const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
  await dropPostgresStore(pool, tag);
  await pool.end();
  const redis = new Redis(REDIS_URL);
  await deleteRedisPrefix(redis, tag);
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
}
