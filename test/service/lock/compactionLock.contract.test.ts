import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { InProcessCompactionLock, InvalidArgumentError, type CompactionLock, createDefaultLogger } from 'session-compaction';
import { PostgresCompactionLock } from 'session-compaction/postgres';
import { RedisCompactionLock } from 'session-compaction/redis';
import { SqliteCompactionLock } from 'session-compaction/sqlite';
import { PG_URL, REDIS_URL, freshServicePrefix, requireService } from '../../support/services.js';
import { deleteRedisKeys, probeRedis } from '../../support/redis.js';
import { probePostgres } from '../../support/postgres.js';

const logger = createDefaultLogger({ silent: true });

/** Two handles on one store, as two processes would hold them (separate connections where there are any). */
interface LockPair {
  name: string;
  setup(ctx: Mocha.Context): Promise<[CompactionLock, CompactionLock]>;
  teardown(): Promise<void>;
}

const pairs: LockPair[] = [
  (() => {
    const shared = new InProcessCompactionLock();
    return { name: 'in-process', setup: async () => [shared, shared], teardown: async () => {} };
  })(),
  (() => {
    let dir = '';
    let locks: SqliteCompactionLock[] = [];
    return {
      name: 'SQLite file',
      setup: async () => {
        dir = mkdtempSync(join(tmpdir(), 'lock-contract-'));
        const path = join(dir, 'locks.db');
        locks = [new SqliteCompactionLock({ path }), new SqliteCompactionLock({ path })];
        return [locks[0]!, locks[1]!];
      },
      teardown: async () => {
        for (const l of locks) await l.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  })(),
  (() => {
    let locks: PostgresCompactionLock[] = [];
    return {
      name: 'PostgreSQL',
      setup: async (ctx) => {
        await requireService(ctx, 'PostgreSQL', probePostgres);
        const prefix = freshServicePrefix();
        locks = [0, 1].map(() => new PostgresCompactionLock({ connectionString: PG_URL, prefix, logger }));
        return [locks[0]!, locks[1]!];
      },
      teardown: async () => {
        for (const l of locks) await l.close();
      },
    };
  })(),
  (() => {
    let locks: RedisCompactionLock[] = [];
    const prefix = freshServicePrefix();
    return {
      name: 'Redis',
      setup: async (ctx) => {
        await requireService(ctx, 'Redis', probeRedis);
        locks = [0, 1].map(() => new RedisCompactionLock({ url: REDIS_URL, prefix, logger }));
        return [locks[0]!, locks[1]!];
      },
      teardown: async () => {
        for (const l of locks) await l.close();
        if (locks.length === 0) return;
        const client = new Redis(REDIS_URL);
        await deleteRedisKeys(client, prefix);
        client.disconnect();
      },
    };
  })(),
];

for (const pair of pairs) {
  describe(`CompactionLock contract: ${pair.name}`, function () {
    this.timeout(10_000);
    let a: CompactionLock;
    let b: CompactionLock;
    let n = 0;
    let session: string;

    before(async function () {
      [a, b] = await pair.setup(this);
    });
    after(async () => pair.teardown());
    beforeEach(() => void (session = `s-${++n}-${Math.random().toString(16).slice(2)}`));

    it('grants one lease at a time per session', async () => {
      const first = await a.acquire(session, { leaseMs: 5000 });
      expect(first).to.not.equal(null);
      expect(await b.acquire(session, { leaseMs: 5000 })).to.equal(null);
      await a.release(first!);
    });

    it('grants leases on different sessions independently', async () => {
      const one = await a.acquire(session, { leaseMs: 5000 });
      const other = await b.acquire(`${session}-other`, { leaseMs: 5000 });
      expect(one).to.not.equal(null);
      expect(other).to.not.equal(null);
      await a.release(one!);
      await b.release(other!);
    });

    it('grants the session again once the holder released it, with a larger fencing token', async () => {
      const first = (await a.acquire(session, { leaseMs: 5000 }))!;
      await a.release(first);
      const second = await b.acquire(session, { leaseMs: 5000 });
      expect(second).to.not.equal(null);
      expect(second!.fencingToken).to.be.greaterThan(first.fencingToken);
      await b.release(second!);
    });

    it('lets a lease that is not renewed expire, so a dead holder never blocks forever', async () => {
      const first = (await a.acquire(session, { leaseMs: 200 }))!;
      await sleep(600);
      const second = await b.acquire(session, { leaseMs: 5000 });
      expect(second).to.not.equal(null);
      expect(second!.fencingToken).to.be.greaterThan(first.fencingToken);
      await b.release(second!);
    });

    it('keeps a renewed lease past its first expiry', async () => {
      // 4 x 400 ms outlives the first 1,000 ms lease; each renewal has 600 ms of slack for a loaded machine.
      let lease = (await a.acquire(session, { leaseMs: 1000 }))!;
      for (let i = 0; i < 4; i++) {
        await sleep(400);
        lease = (await a.renew(lease, 1000))!;
        expect(lease, `renewal ${i}`).to.not.equal(null);
      }
      expect(await b.acquire(session, { leaseMs: 5000 })).to.equal(null);
      await a.release(lease);
    });

    it('refuses to renew a lost lease, and a stale release leaves the new holder in place', async () => {
      const stale = (await a.acquire(session, { leaseMs: 200 }))!;
      await sleep(600);
      const current = (await b.acquire(session, { leaseMs: 5000 }))!;
      expect(await a.renew(stale, 5000)).to.equal(null);
      await a.release(stale);
      expect(await a.acquire(session, { leaseMs: 5000 })).to.equal(null);
      await b.release(current);
    });

    it('waits up to waitMs for the holder to release', async () => {
      const first = (await a.acquire(session, { leaseMs: 5000 }))!;
      setTimeout(() => void a.release(first), 150);
      const started = Date.now();
      const second = await b.acquire(session, { leaseMs: 5000, waitMs: 3000 });
      expect(second).to.not.equal(null);
      expect(Date.now() - started).to.be.at.least(100);
      await b.release(second!);
    });

    it('gives up with null after waitMs when the holder keeps the lease', async () => {
      const first = (await a.acquire(session, { leaseMs: 5000 }))!;
      const started = Date.now();
      expect(await b.acquire(session, { leaseMs: 5000, waitMs: 200 })).to.equal(null);
      expect(Date.now() - started).to.be.within(150, 2000);
      await a.release(first);
    });

    it('refuses a lease duration below the minimum and a negative wait', async () => {
      await expectRejection(a.acquire(session, { leaseMs: 10 }), 'leaseMs must be an integer');
      await expectRejection(a.acquire(session, { leaseMs: 1000, waitMs: -1 }), 'waitMs must be an integer');
      await expectRejection(a.acquire('', { leaseMs: 1000 }), 'sessionId must not be null or empty');
    });
  });
}

async function expectRejection(promise: Promise<unknown>, message: string): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).to.be.instanceOf(InvalidArgumentError);
  expect((error as Error).message).to.contain(message);
}
