import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createDefaultLogger, RedisSessionRepository, SchemaVersionError, Session } from 'session-compaction';
import { migrateRedis, migrationsKey } from '../../../src/backends/redis/migrator.js';
import { REDIS_MIGRATIONS, type RedisMigration } from '../../../src/backends/redis/schema.js';
import { REDIS_URL, requireService } from '../../support/services.js';
import { deleteRedisKeys, freshRedisPrefix, probeRedis } from '../../support/redis.js';

const logger = createDefaultLogger({ silent: true });
const allVersions = REDIS_MIGRATIONS.map((m) => m.version).sort((a, b) => a - b);

describe('Redis schema versions', function () {
  let client: Redis;
  const prefixes: string[] = [];
  const fresh = () => {
    const p = freshRedisPrefix();
    prefixes.push(p);
    return p;
  };

  before(async function () {
    await requireService(this, 'Redis', probeRedis);
    client = new Redis(REDIS_URL);
  });
  after(async function () {
    if (client === undefined) return;
    for (const p of prefixes) await deleteRedisKeys(client, p);
    client.disconnect();
  });

  const recorded = async (p: string) => (await client.hkeys(migrationsKey(p))).map(Number).sort((a, b) => a - b);

  it('first use records the key-layout version in <prefix>:migrations', async function () {
    const p = fresh();
    const repo = new RedisSessionRepository({ client, prefix: p });
    await repo.save(Session.create({ id: 's', userId: 'u' }));
    expect(await recorded(p)).to.deep.equal(allVersions);
    expect(JSON.parse((await client.hget(migrationsKey(p), '1'))!)).to.have.property('name', REDIS_MIGRATIONS[0]!.name);
  });

  it('with initializeSchema: false nothing is recorded until migrate(); dry run lists the steps', async function () {
    const p = fresh();
    const repo = new RedisSessionRepository({ client, prefix: p, initializeSchema: false });
    await repo.findById('x');
    expect(await repo.migrate({ dryRun: true })).to.deep.equal(allVersions);
    expect((await repo.schemaStatus()).pending.map((s) => s.version)).to.deep.equal(allVersions);
    expect(await recorded(p)).to.deep.equal([]);
    expect(await repo.migrate()).to.deep.equal(allVersions);
    expect(await repo.migrate()).to.deep.equal([]);
  });

  it('runs a missing lower step even when a higher one is recorded, each once', async function () {
    const p = fresh();
    const runs: number[] = [];
    const step = (version: number): RedisMigration => ({
      version,
      name: `step ${version}`,
      statements: [],
      run: async ({ client: c, prefix }) => {
        runs.push(version);
        await c.set(`${prefix}:step${version}`, '1');
      },
    });
    await migrateRedis(client, p, logger, [...REDIS_MIGRATIONS, step(900)]);
    expect(await migrateRedis(client, p, logger, [...REDIS_MIGRATIONS, step(900), step(800)])).to.deep.equal([800]);
    expect(runs).to.deep.equal([900, 800]);
    expect(await client.get(`${p}:step800`)).to.equal('1');
  });

  it('concurrent migrations run each step once (the lock key serialises them)', async function () {
    const p = fresh();
    let runs = 0;
    const slow: RedisMigration = {
      version: 900,
      name: 'slow',
      statements: [],
      run: async () => {
        runs++;
        await new Promise((resolve) => setTimeout(resolve, 100));
      },
    };
    const results = await Promise.all([1, 2, 3].map(() => migrateRedis(client, p, logger, [...REDIS_MIGRATIONS, slow])));
    expect(runs).to.equal(1);
    expect(results.flat().sort((a, b) => a - b)).to.deep.equal([...allVersions, 900]);
  });

  it('refuses keys written by a newer version with SchemaVersionError, with or without initializeSchema', async function () {
    const p = fresh();
    await new RedisSessionRepository({ client, prefix: p }).migrate();
    await client.hset(migrationsKey(p), '9999', JSON.stringify({ name: 'from the future', appliedAt: 0 }));
    for (const initializeSchema of [true, false]) {
      const repo = new RedisSessionRepository({ client, prefix: p, initializeSchema });
      let error: unknown;
      await repo.findById('x').catch((e: unknown) => (error = e));
      expect(error, `initializeSchema ${initializeSchema}`).to.be.instanceOf(SchemaVersionError);
      expect((error as SchemaVersionError).message).to.include("redis schema at prefix '");
    }
  });
});
