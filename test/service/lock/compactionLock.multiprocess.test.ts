import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { Redis } from 'ioredis';
import { PG_URL, REDIS_URL, freshServicePrefix, requireService } from '../../support/services.js';
import { deleteRedisKeys, probeRedis } from '../../support/redis.js';
import { dropPostgresTables, probePostgres } from '../../support/postgres.js';
import { runContention, runKill, type LockBackend } from './lockHarness.js';

const PROCESSES = 4;
const ATTEMPTS = 50;
const KILL_LEASE_MS = 1000;

interface Setup {
  name: string;
  /** In a `before` hook: a fresh store, or a skip when the server is unreachable. */
  setup(ctx: Mocha.Context): Promise<LockBackend>;
  teardown(): Promise<void>;
  /** The successor may take over at once when the store frees the lock with the holder's connection. */
  freedWithConnection: boolean;
}

const sqlite = (): Setup => {
  let dir = '';
  return {
    name: 'SQLite file',
    freedWithConnection: false,
    setup: async () => {
      dir = mkdtempSync(join(tmpdir(), 'lock-sqlite-'));
      return { backend: 'sqlite', target: join(dir, 'sessions.db'), prefix: 'unused' };
    },
    teardown: async () => rmSync(dir, { recursive: true, force: true }),
  };
};

const postgres = (): Setup => {
  const prefix = freshServicePrefix();
  let reachable = false;
  return {
    name: 'PostgreSQL',
    freedWithConnection: true,
    setup: async (ctx) => {
      await requireService(ctx, 'PostgreSQL', probePostgres);
      reachable = true;
      return { backend: 'postgres', target: PG_URL, prefix };
    },
    teardown: async () => {
      if (!reachable) return;
      const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
      await dropPostgresTables(pool, prefix);
      await pool.end();
    },
  };
};

const redis = (): Setup => {
  const prefix = freshServicePrefix();
  let reachable = false;
  return {
    name: 'Redis',
    freedWithConnection: false,
    setup: async (ctx) => {
      await requireService(ctx, 'Redis', probeRedis);
      reachable = true;
      return { backend: 'redis', target: REDIS_URL, prefix };
    },
    teardown: async () => {
      if (!reachable) return;
      const client = new Redis(REDIS_URL);
      await deleteRedisKeys(client, prefix);
      client.disconnect();
    },
  };
};

for (const make of [sqlite, postgres, redis]) {
  const s = make();
  describe(`compaction lock across processes: ${s.name}`, function () {
    this.timeout(90_000);
    let backend: LockBackend;

    before(async function () {
      backend = await s.setup(this);
    });
    after(async () => s.teardown());

    it(`lets no two of ${PROCESSES} processes × ${ATTEMPTS} compactions of one session summarise at the same time`, async () => {
      const run = await runContention(backend, 'contended', { processes: PROCESSES, attempts: ATTEMPTS, mode: 'run' });
      console.log(
        `      ${s.name}: ${run.calls} summaries, ${run.overlaps} overlaps, ${JSON.stringify(run.tally)} in ${run.seconds.toFixed(1)} s`,
      );
      expect(run.overlaps).to.equal(0);
      // The run proves something only if the processes really contended and summarised. How many summaries
      // fit in the run depends on the machine's load, so the floor only rules out a run that barely summarised.
      expect(run.tally['lock-held'] ?? 0, 'attempts that found the lease held').to.be.greaterThan(0);
      expect(run.calls, 'summaries').to.be.at.least(ATTEMPTS / 5);
      // A summary may still lose its CAS to the appends (they are not locked): never to another compaction.
      expect(run.tally.committed, 'committed compactions').to.be.greaterThan(0);
    });

    it('lets another process compact after the holder was killed with SIGKILL mid-summary', async () => {
      const run = await runKill(backend, 'killed', KILL_LEASE_MS, 10 * KILL_LEASE_MS);
      console.log(`      ${s.name}: takeover ${run.takeoverMs.toFixed(0)} ms after SIGKILL (lease ${KILL_LEASE_MS} ms)`);
      expect(run.successorTally.committed).to.equal(1);
      if (s.freedWithConnection) expect(run.takeoverMs).to.be.below(KILL_LEASE_MS);
      else {
        // The holder renewed every third of a lease until it died: its lease outlived it by at least 2/3 of one.
        expect(run.takeoverMs).to.be.within((2 / 3) * KILL_LEASE_MS - 50, 2 * KILL_LEASE_MS);
      }
    });
  });
}

describe('compaction lock across processes: control without the lock', function () {
  this.timeout(90_000);
  const s = sqlite();
  let backend: LockBackend;
  before(async function () {
    backend = await s.setup(this);
  });
  after(async () => s.teardown());

  it('counts overlapping summaries when only the in-process mutex guards (the detector can fail)', async () => {
    const run = await runContention(backend, 'unguarded', { processes: PROCESSES, attempts: 20, mode: 'unlocked' });
    console.log(`      unguarded: ${run.calls} summaries, ${run.overlaps} overlaps, ${JSON.stringify(run.tally)}`);
    expect(run.overlaps).to.be.greaterThan(0);
  });
});
