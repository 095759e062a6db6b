import { createServer } from 'node:net';
import pg from 'pg';
import { expect } from 'chai';
import {
  Messages,
  RepositoryConnectionError,
  Session,
  SessionEvent,
  createDefaultLogger,
  type Logger,
  PostgresSessionRepository,
} from 'session-compaction';
import { PG_URL, freshServicePrefix, requireService } from '../../support/services.js';
import { describeChaos, runConnectionChaos } from '../../repository/connectionFaults.js';
import {
  describeCrashSummary,
  describeForkCrashSummary,
  runCrashes,
  runForkCrashes,
  seedForkSource,
  type CrashBackend,
} from '../../repository/crashHarness.js';
import { dropPostgresTables, probePostgres } from '../../support/postgres.js';

const silent = createDefaultLogger({ silent: true });

/** A logger that keeps what the repository reported, to prove a fault was seen and handled. */
function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return {
    warnings,
    warn: (message: string) => warnings.push(message),
    error: () => undefined,
    info: () => undefined,
    debug: () => undefined,
  };
}

function withApplicationName(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', name);
  return u.toString();
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('PostgresSessionRepository under connection faults', function () {
  this.timeout(120_000);
  const prefix = freshServicePrefix();
  let admin: pg.Pool;

  before(async function () {
    await requireService(this, 'PostgreSQL', probePostgres);
    admin = new pg.Pool({ connectionString: PG_URL, max: 2 });
    await new PostgresSessionRepository({ pool: admin, prefix, logger: silent }).migrate();
  });
  after(async function () {
    if (admin === undefined) return;
    await dropPostgresTables(admin, prefix);
    await admin.end();
  });

  /** Terminates the backends of one application name: one at random, or (one time in five) all of them. */
  const terminate = async (applicationName: string, all = Math.random() < 0.2): Promise<number> => {
    const { rows } = await admin.query(
      `SELECT pg_terminate_backend(pid) AS ended FROM (
         SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()
         ORDER BY random() LIMIT $2) victims`,
      [applicationName, all ? 1000 : 1],
    );
    return rows.filter((r: { ended: boolean }) => r.ended).length;
  };

  it('backends killed every 5–25 ms (for up to 30 s) during 400 appends and concurrent compactions: no crash, no loss, no half-applied compaction', async function () {
    const name = `sc-chaos-${prefix}`;
    // The appenders' pool is the repository's own; the compactors' pool is the caller's, with no 'error' listener of its own.
    const appendRepository = new PostgresSessionRepository({
      connectionString: withApplicationName(PG_URL, name),
      prefix,
      logger: silent,
    });
    const callerPool = new pg.Pool({ connectionString: PG_URL, application_name: name, max: 4 });
    const compactRepository = new PostgresSessionRepository({ pool: callerPool, prefix, logger: silent });
    try {
      const stats = await runConnectionChaos({
        sessionId: `chaos-${prefix}`,
        appendRepository,
        compactRepository,
        kill: () => terminate(name),
        open: async () => new PostgresSessionRepository({ pool: admin, prefix, logger: silent }),
      });
      console.log(`      ${describeChaos('PostgreSQL', stats)}`);
      expect(stats.kills, 'connections were really killed').to.be.greaterThan(20);
      expect(stats.appendFailures + stats.compactionFailures, 'faults reached the callers').to.be.greaterThan(0);
    } finally {
      await appendRepository.close();
      await compactRepository.close();
      await callerPool.end();
    }
  });

  it('a backend terminated while compactEvents waits inside its transaction: RepositoryConnectionError, log unchanged, next call works', async function () {
    const name = `sc-txn-${prefix}`;
    const pool = new pg.Pool({ connectionString: PG_URL, application_name: name, max: 2 });
    const repo = new PostgresSessionRepository({ pool, prefix, logger: silent });
    const id = `txn-${prefix}`;
    const locker = await admin.connect();
    try {
      await repo.save(Session.create({ id, userId: 'u' }));
      const events = ['a', 'b', 'c'].map((t) => SessionEvent.create({ sessionId: id, message: Messages.user(t) }));
      for (const e of events) await repo.appendEvent(e);
      const before = await repo.findEvents(id);
      const version = await repo.getEventVersion(id);

      // Hold the session row so that the compaction blocks inside its transaction, then kill its backend.
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM ${prefix}_sessions WHERE id = $1 FOR UPDATE`, [id]);
      const compaction = repo.compactEvents(id, events.slice(0, 2), events.slice(2), version).then(
        () => null,
        (error: unknown) => error,
      );
      for (let i = 0; i < 200; i++) {
        const { rows } = await admin.query(
          `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
          [name],
        );
        if (rows.length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(await terminate(name, true)).to.be.greaterThan(0);
      const error = await compaction;
      await locker.query('ROLLBACK');

      expect(error).to.be.instanceOf(RepositoryConnectionError);
      const e = error as RepositoryConnectionError;
      expect(e.retriable).to.equal(true);
      expect(e.backend).to.equal('postgres');
      expect(e.operation).to.equal('compactEvents');
      expect((e.cause as { code?: string }).code).to.equal('57P01');
      expect(await repo.getEventVersion(id), 'version unchanged').to.equal(version);
      expect((await repo.findEvents(id)).map((x) => [x.id, x.archived])).to.deep.equal(before.map((x) => [x.id, x.archived]));
      expect(await repo.compactEvents(id, events.slice(0, 2), events.slice(2), version), 'the retry commits').to.equal(true);
    } finally {
      locker.release();
      await repo.close();
      await pool.end();
    }
  });

  it('an idle connection of a caller’s pool killed by the server does not crash the process; the next call works', async function () {
    const name = `sc-idle-${prefix}`;
    const logger = recordingLogger();
    const pool = new pg.Pool({ connectionString: PG_URL, application_name: name, max: 3 });
    const repo = new PostgresSessionRepository({ pool, prefix, logger });
    try {
      await Promise.all([repo.findById('x'), repo.findById('y'), repo.findById('z')]);
      expect(await terminate(name, true)).to.be.greaterThan(0);
      // Give the dead sockets time to report; unhandled, their 'error' events would end the process here.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(logger.warnings.some((w) => w.includes('idle PostgreSQL connection failed'))).to.equal(true);
      expect(await repo.findById('x')).to.equal(null);
    } finally {
      await repo.close();
      await pool.end();
    }
  });

  it('a read on a connection killed just before is retried once on a fresh one', async function () {
    const name = `sc-read-${prefix}`;
    const logger = recordingLogger();
    const pool = new pg.Pool({ connectionString: PG_URL, application_name: name, max: 1 });
    const repo = new PostgresSessionRepository({ pool, prefix, logger });
    const id = `read-${prefix}`;
    try {
      await repo.save(Session.create({ id, userId: 'u' }));
      for (let i = 0; i < 5; i++) {
        await terminate(name, true);
        expect((await repo.findById(id))?.userId).to.equal('u');
      }
      // Each kill was seen either by the idle pool (connection replaced) or by the read itself (retried).
      expect(logger.warnings.length).to.be.at.least(1);
    } finally {
      await repo.close();
      await pool.end();
    }
  });

  it('an unreachable server fails with RepositoryConnectionError naming the operation, the socket error as cause', async function () {
    const url = new URL(PG_URL);
    url.port = String(await closedPort());
    const repo = new PostgresSessionRepository({ connectionString: url.toString(), prefix, logger: silent });
    try {
      let error: unknown;
      try {
        await repo.appendEvent(SessionEvent.create({ sessionId: 's', message: Messages.user('hi') }));
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(RepositoryConnectionError);
      expect((error as RepositoryConnectionError).operation).to.equal('appendEvent');
      expect(((error as Error).cause as { code?: string }).code).to.equal('ECONNREFUSED');
    } finally {
      await repo.close();
    }
  });

  it('close() leaves a caller’s pool open and removes every listener it added', async function () {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    try {
      const events = ['error', 'acquire', 'release'] as const;
      const counts = () => events.map((e) => pool.listenerCount(e));
      const before = counts();
      const repo = new PostgresSessionRepository({ pool, prefix, logger: silent });
      expect(counts()).to.deep.equal(before.map((n) => n + 1));
      await repo.findById('x');
      await repo.close();
      expect(counts()).to.deep.equal(before);
      const client = await pool.connect();
      expect(client.listenerCount('error'), 'no listener left on a client either').to.equal(0);
      client.release();
      expect((await pool.query('SELECT 1 AS one')).rows[0].one).to.equal(1);
    } finally {
      await pool.end();
    }
  });

  describe('SIGKILL mid-compaction', function () {
    const crashPrefix = freshServicePrefix();
    after(async function () {
      if (admin !== undefined) await dropPostgresTables(admin, crashPrefix);
    });

    const crashBackend = (): CrashBackend => ({
      backend: 'postgres',
      target: PG_URL,
      prefix: crashPrefix,
      open: async () => new PostgresSessionRepository({ pool: admin, prefix: crashPrefix, logger: silent }),
      // The worker names its connections `${prefix}-${tag}` (crashWorker.ts).
      settled: async (tag) => {
        for (const deadline = Date.now() + 10_000; ; await new Promise((resolve) => setTimeout(resolve, 5))) {
          const { rows } = await admin.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
            [`${crashPrefix}-${tag}`],
          );
          if (rows[0]!.n === 0) return;
          if (Date.now() > deadline) throw new Error(`the server kept ${rows[0]!.n} connection(s) of killed worker ${tag}`);
        }
      },
    });

    it('20 kills of a process appending and compacting: every acknowledged append survives once, no compaction is half-applied', async function () {
      this.timeout(180_000);
      const summary = await runCrashes(crashBackend(), 'crash');
      console.log(`      ${describeCrashSummary('PostgreSQL', summary)}`);
    });

    it('10 kills inside a fork: every fork in the store is a whole copy, none empty or partial', async function () {
      this.timeout(180_000);
      await seedForkSource(new PostgresSessionRepository({ pool: admin, prefix: crashPrefix, logger: silent }), 'fork-source');
      const summary = await runForkCrashes(crashBackend(), 'fork-source');
      console.log(`      ${describeForkCrashSummary('PostgreSQL', summary)}`);
    });
  });
});
