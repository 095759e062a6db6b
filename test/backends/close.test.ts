/**
 * `close()` is safe to call any number of times, one after the other or at once, on every repository and
 * every lock — whether it owns its connection (the case pg rejects: "Called end on pool more than once") or
 * shares the caller's. A shutdown path that closes twice must not stop at a rejection.
 */
import { expect } from 'chai';
import pg from 'pg';
import { Redis } from 'ioredis';
import { Bm25Retriever, DefaultSessionService, EmbeddingRetriever, InMemorySessionRepository } from 'session-compaction';
import { PostgresCompactionLock, PostgresSessionRepository } from 'session-compaction/postgres';
import { RedisCompactionLock, RedisSessionRepository } from 'session-compaction/redis';
import { SqliteCompactionLock, SqliteSessionRepository } from 'session-compaction/sqlite';
import { freshPostgresPrefix, probePostgres } from '../support/postgres.js';
import { freshRedisPrefix, probeRedis } from '../support/redis.js';
import { PG_URL, REDIS_URL, requireService } from '../support/services.js';
import { silentLogger } from '../summarization/support.js';

interface Closable {
  close(): Promise<void> | void;
}

/** Closes `open()`'s resource twice in a row, and another one three times at once: every call resolves. */
function closesAnyNumberOfTimes(name: string, open: () => Promise<Closable> | Closable) {
  it(`${name}: a second close() resolves`, async function () {
    const resource = await open();
    await resource.close();
    await resource.close();
  });

  it(`${name}: concurrent close() calls all resolve`, async function () {
    const resource = await open();
    const outcomes = await Promise.allSettled([resource.close(), resource.close(), resource.close()]);
    expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'fulfilled', 'fulfilled']);
    await resource.close();
  });
}

describe('close() is idempotent: memory and in-process resources', function () {
  closesAnyNumberOfTimes('InMemorySessionRepository', () => new InMemorySessionRepository());
  const service = () => new DefaultSessionService(new InMemorySessionRepository(), { logger: silentLogger });
  closesAnyNumberOfTimes('Bm25Retriever', () => new Bm25Retriever({ sessionService: service() }));
  closesAnyNumberOfTimes(
    'EmbeddingRetriever',
    () => new EmbeddingRetriever({ sessionService: service(), embed: async (texts) => texts.map(() => [1]) }),
  );
});

describe('close() is idempotent: SQLite', function () {
  closesAnyNumberOfTimes('SqliteSessionRepository', () => new SqliteSessionRepository({ path: ':memory:' }));
  closesAnyNumberOfTimes('SqliteCompactionLock', () => new SqliteCompactionLock({ path: ':memory:' }));
});

describe('close() is idempotent: PostgreSQL', function () {
  const pools: pg.Pool[] = [];
  before(async function () {
    await requireService(this, 'PostgreSQL', probePostgres);
  });
  after(async () => Promise.all(pools.splice(0).map((p) => p.end())));

  closesAnyNumberOfTimes('PostgresSessionRepository owning its pool', async () => {
    const repo = new PostgresSessionRepository({ connectionString: PG_URL, prefix: freshPostgresPrefix(), logger: silentLogger });
    return repo;
  });
  closesAnyNumberOfTimes('PostgresSessionRepository on a caller pool', () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    pools.push(pool);
    return new PostgresSessionRepository({ pool, prefix: freshPostgresPrefix(), logger: silentLogger });
  });
  closesAnyNumberOfTimes('PostgresCompactionLock owning its pool, with a lease held', async () => {
    const lock = new PostgresCompactionLock({ connectionString: PG_URL, prefix: freshPostgresPrefix(), logger: silentLogger });
    expect(await lock.acquire('s-1', { leaseMs: 10_000, waitMs: 0 })).to.not.equal(null);
    return lock;
  });

  it('a caller pool stays usable after the repository was closed twice', async function () {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    pools.push(pool);
    const repo = new PostgresSessionRepository({ pool, prefix: freshPostgresPrefix(), logger: silentLogger });
    await Promise.all([repo.close(), repo.close()]);
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).to.equal(1);
  });
});

describe('close() is idempotent: Redis', function () {
  const clients: Redis[] = [];
  before(async function () {
    await requireService(this, 'Redis', probeRedis);
  });
  after(() => clients.splice(0).forEach((c) => c.disconnect()));

  closesAnyNumberOfTimes('RedisSessionRepository owning its client', async () => {
    const repo = new RedisSessionRepository({ url: REDIS_URL, prefix: freshRedisPrefix(), logger: silentLogger });
    expect(await repo.findById('missing')).to.equal(null);
    return repo;
  });
  closesAnyNumberOfTimes('RedisSessionRepository on a caller client', () => {
    const client = new Redis(REDIS_URL);
    clients.push(client);
    return new RedisSessionRepository({ client, prefix: freshRedisPrefix(), logger: silentLogger });
  });
  closesAnyNumberOfTimes('RedisCompactionLock owning its client', async () => {
    const lock = new RedisCompactionLock({ url: REDIS_URL, prefix: freshRedisPrefix(), logger: silentLogger });
    expect(await lock.acquire('s-1', { leaseMs: 10_000, waitMs: 0 })).to.not.equal(null);
    return lock;
  });
});
