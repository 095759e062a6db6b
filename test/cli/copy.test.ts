/**
 * `copy` between backends: SQLite → PostgreSQL → Redis → SQLite ends with identical logs, and a copy killed
 * half way (SIGKILL, a real child process) finishes on the next run with nothing duplicated or lost. The full
 * size (1,000 sessions × 200 events) is measured in benchmarks/copy-migration.ts.
 */
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { SessionRepository } from 'session-compaction';
import { SqliteSessionRepository } from 'session-compaction/sqlite';
import { compareSnapshots } from '../../cli/src/admin/compareSessions.js';
import { readSnapshot } from '../../cli/src/admin/sessionSnapshot.js';
import { collectSessionIds } from '../../cli/src/admin/sessionIds.js';
import { populateStore } from '../support/populateStore.js';
import { PG_URL, REDIS_URL, requireService } from '../support/services.js';
import { dropPostgresTables, freshPostgresPrefix, probePostgres } from '../support/postgres.js';
import { deleteRedisKeys, freshRedisPrefix, probeRedis } from '../support/redis.js';
import { json, runCli } from './support/runCli.js';

const MAIN = fileURLToPath(new URL('../../cli/src/main.ts', import.meta.url));

/** Every session of `a` is in `b` with the same log and a version no lower, and `b` has no other session. */
async function expectSameStores(a: SessionRepository, b: SessionRepository): Promise<number> {
  const ids = await collectSessionIds(a);
  expect((await collectSessionIds(b)).sort()).to.deep.equal([...ids].sort());
  let events = 0;
  for (const id of ids) {
    const source = (await readSnapshot(a, id))!;
    expect(compareSnapshots(source, await readSnapshot(b, id)), id).to.equal(null);
    events += source.events.length;
  }
  return events;
}

describe('cli: copy between backends', function () {
  this.timeout(120_000);
  let dir: string;
  let source: string;
  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'cli-copy-'));
    source = join(dir, 'source.db');
    const repo = new SqliteSessionRepository({ path: source, synchronous: 'NORMAL' });
    await populateStore(repo, { sessions: 24, events: 60, chunk: 20 });
    await repo.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('SQLite → PostgreSQL → Redis → SQLite', function () {
    let pool: pg.Pool | undefined;
    let client: Redis | undefined;
    const pgPrefix = freshPostgresPrefix();
    const redisPrefix = freshRedisPrefix();
    before(async function () {
      await requireService(this, 'PostgreSQL', probePostgres);
      await requireService(this, 'Redis', probeRedis);
      pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
      client = new Redis(REDIS_URL);
    });
    after(async function () {
      if (pool !== undefined) {
        await dropPostgresTables(pool, pgPrefix);
        await pool.end();
      }
      if (client !== undefined) {
        await deleteRedisKeys(client, redisPrefix);
        client.disconnect();
      }
    });

    it('ends with identical logs (ids, order, archived flags, versions) and passes verify --all', async function () {
      const pgUrl = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}prefix=${pgPrefix}`;
      const redisUrl = `${REDIS_URL}${REDIS_URL.includes('?') ? '&' : '?'}prefix=${redisPrefix}`;
      const final = join(dir, 'final.db');
      for (const [from, to] of [
        [`sqlite:${source}`, pgUrl],
        [pgUrl, redisUrl],
        [redisUrl, `sqlite:${final}`],
      ] as const) {
        const run = await runCli('copy', '--from', from, '--to', to, '--json');
        expect(run.code, run.stdout + run.stderr).to.equal(0);
        expect(json(run)).to.deep.include({ ok: true, sessions: 24, failures: [] });
      }
      const verify = await runCli('verify', '--all', '--url', `sqlite:${final}`, '--json');
      expect(verify.code).to.equal(0);
      expect(json(verify)).to.include({ ok: true, sessions: 24 });
      const a = new SqliteSessionRepository({ path: source });
      const b = new SqliteSessionRepository({ path: final });
      try {
        const events = await expectSameStores(a, b);
        expect(events).to.be.greaterThan(24 * 60);
        // Versions are carried over exactly where compactions left more version steps than events.
        for (const id of await collectSessionIds(a))
          expect(await b.getEventVersion(id)).to.be.at.least(await a.getEventVersion(id));
      } finally {
        await a.close();
        await b.close();
      }
    });
  });

  it('killed half way (SIGKILL) and run again, it finishes with nothing duplicated or lost', async function () {
    const target = join(dir, 'killed.db');
    // Small batches and durable commits make the first run slow enough to be killed in the middle.
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
        `sqlite:${target}`,
        '--concurrency',
        '1',
        '--batch-size',
        '3',
        '--durable',
        '--no-progress',
      ],
      {
        stdio: 'ignore',
      },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    let copiedWhenKilled = -1;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      let events: number;
      try {
        const db = new Database(target, { readonly: true, fileMustExist: true });
        try {
          events = (db.prepare('SELECT count(*) AS n FROM session_compaction_events').get() as { n: number }).n;
        } finally {
          db.close();
        }
      } catch {
        continue; // not created yet
      }
      if (events >= 24 * 60 * 0.4) {
        child.kill('SIGKILL');
        copiedWhenKilled = events;
        break;
      }
    }
    expect(await exited, 'the first run was killed, not finished').to.equal('SIGKILL');
    expect(copiedWhenKilled).to.be.greaterThan(0);

    const rerun = await runCli('copy', '--from', `sqlite:${source}`, '--to', `sqlite:${target}`, '--json');
    expect(rerun.code, rerun.stdout + rerun.stderr).to.equal(0);
    const report = json<{ ok: boolean; written: number; resumed: number; unchanged: number; eventsAppended: number }>(rerun);
    expect(report.ok).to.equal(true);
    expect(report.unchanged + report.resumed).to.be.greaterThan(0);
    expect(report.written + report.resumed).to.be.greaterThan(0);

    const a = new SqliteSessionRepository({ path: source });
    const b = new SqliteSessionRepository({ path: target });
    try {
      const events = await expectSameStores(a, b);
      // The second run appended only what the first had not written: it resumed rather than started over.
      expect(report.eventsAppended).to.be.at.most(events - copiedWhenKilled);
    } finally {
      await a.close();
      await b.close();
    }
    const verify = await runCli('verify', '--all', '--url', `sqlite:${target}`, '--json');
    expect(json(verify)).to.include({ ok: true, sessions: 24 });
  });
});
