import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import {
  InMemorySessionRepository,
  PostgresSessionRepository,
  RedisSessionRepository,
  SqliteSessionRepository,
  createDefaultLogger,
} from 'session-compaction';
import { lifecycleServiceContract } from '../service/lifecycleServiceContract.js';
import { freshPostgresPrefix, postgresPoolFixture } from '../support/postgres.js';
import { PG_URL, REDIS_URL, requireService } from '../support/services.js';
import { lifecycleRepositoryContract } from './lifecycleContract.js';
import { deleteRedisKeys, freshRedisPrefix, probeRedis } from '../support/redis.js';

const logger = createDefaultLogger({ level: 'error' });

describe('data lifecycle on every backend', function () {
  describe('in memory', function () {
    // One store per test, shared by the repositories a test opens.
    let store = new InMemorySessionRepository();
    beforeEach(() => (store = new InMemorySessionRepository()));
    const open = async () => store;
    lifecycleRepositoryContract('InMemorySessionRepository', open);
    lifecycleServiceContract({ name: 'InMemorySessionRepository', open });
  });

  describe('SQLite', function () {
    const dir = mkdtempSync(join(tmpdir(), 'lifecycle-'));
    const path = join(dir, 'lifecycle.db');
    after(() => rmSync(dir, { recursive: true, force: true }));
    const open = async () => new SqliteSessionRepository({ path, prefix: 'lc', logger });
    lifecycleRepositoryContract('SqliteSessionRepository', open);
    lifecycleServiceContract({ name: 'SqliteSessionRepository', open, cli: { url: `sqlite:${path}`, prefix: 'lc' } });
    lifecycleRepositoryContract(
      'SqliteSessionRepository (secureDelete)',
      async () => new SqliteSessionRepository({ path: join(dir, 'secure.db'), secureDelete: true, logger }),
    );
  });

  describe('PostgreSQL', function () {
    const prefix = freshPostgresPrefix();
    const db = postgresPoolFixture(prefix, { max: 10 });
    const open = async () => new PostgresSessionRepository({ pool: db.pool(), prefix, logger });
    lifecycleRepositoryContract('PostgresSessionRepository', open);
    lifecycleServiceContract({ name: 'PostgresSessionRepository', open, cli: { url: PG_URL, prefix } });
  });

  describe('Redis', function () {
    const prefix = freshRedisPrefix();
    let client: Redis | undefined;
    before(async function () {
      await requireService(this, 'Redis', probeRedis);
      client = new Redis(REDIS_URL);
    });
    after(async function () {
      if (client === undefined) return;
      await deleteRedisKeys(client, prefix);
      await client.quit();
    });
    const open = async () => new RedisSessionRepository({ client: client!, prefix, logger });
    lifecycleRepositoryContract('RedisSessionRepository', open);
    lifecycleServiceContract({ name: 'RedisSessionRepository', open, cli: { url: REDIS_URL, prefix } });
  });
});
