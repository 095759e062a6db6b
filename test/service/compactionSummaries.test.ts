/**
 * The light listing of compactions, `listCompactions(id, { eventIds: false })`, on every backend: the same
 * records as the full listing, in the same order, without their id arrays and with their counts; the default
 * stays the full record. Every durable backend also lists records written before summaries were stored beside them.
 */
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import {
  DefaultSessionService,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  PostgresSessionRepository,
  RedisSessionRepository,
  SlidingWindowCompactionStrategy,
  SqliteSessionRepository,
  type CompactionRecord,
  type CompactionRecordSummary,
} from 'session-compaction';
import { COMPACTION_SUMMARY_SCHEMA_VERSION } from 'session-compaction/spi';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/backends/postgres/schema.js';
import { migrateSqlite } from '../../src/backends/sqlite/migrator.js';
import { SQLITE_MIGRATIONS, sqliteTables } from '../../src/backends/sqlite/schema.js';
import { allBackends, type BuiltInRepository } from '../support/backends.js';
import { CharEstimator, expectRejects } from '../support/fixtures.js';
import { freshPostgresPrefix, migratePostgresBelow, postgresPoolFixture } from '../support/postgres.js';
import { deleteRedisKeys, freshRedisPrefix, probeRedis } from '../support/redis.js';
import { REDIS_URL, requireService } from '../support/services.js';
import { silentLogger } from '../summarization/support.js';

const est = new CharEstimator();
const always = () => true;
const slidingWindow = (maxEvents: number) =>
  new SlidingWindowCompactionStrategy({ maxEvents, cutWithinTurn: 'never', tokenCountEstimator: est });

/** A session compacted twice (the later compaction reverted): two records, one of them reverted. */
async function compactedTwice(service: DefaultSessionService): Promise<string> {
  const { id } = await service.create({ userId: 'alice' });
  for (let i = 0; i < 6; i++) {
    await service.appendMessage(id, Messages.user(`question ${i}`));
    await service.appendMessage(id, Messages.assistant(`answer ${i}`));
  }
  await service.compact(id, always, slidingWindow(6));
  await service.appendMessage(id, Messages.user('question 6'));
  await service.appendMessage(id, Messages.assistant('answer 6'));
  await service.compact(id, always, slidingWindow(2));
  const [latest] = await service.listCompactions(id);
  await service.revertCompaction(id, latest!.id);
  return id;
}

/** What a summary must say of `record`: everything but the arrays, and their lengths. */
function expectedSummary(record: CompactionRecord): CompactionRecordSummary {
  const { windowBefore, windowAfter, archivedEventIds, addedEventIds, removedEvents, ...rest } = record;
  return {
    ...rest,
    windowBeforeCount: windowBefore.length,
    windowAfterCount: windowAfter.length,
    archivedEventCount: archivedEventIds.length,
    addedEventCount: addedEventIds.length,
    removedEventCount: removedEvents.length,
  };
}

for (const backend of allBackends()) {
  describe(`listCompactions without event ids on ${backend.name}`, function () {
    this.timeout(60_000);
    let repository: BuiltInRepository;
    let service: DefaultSessionService;
    before(async function () {
      await backend.setup(this);
      repository = backend.repository();
    });
    after(async () => backend.teardown());
    beforeEach(() => {
      service = new DefaultSessionService(repository, { logger: silentLogger, tokenCountEstimator: est });
    });

    it('lists the same records, newest first, with counts in place of the id arrays (reverted mark included)', async function () {
      const id = await compactedTwice(service);
      const full = await service.listCompactions(id);
      const light = await service.listCompactions(id, { eventIds: false });
      expect(full).to.have.length(2);
      expect(full[0]!.revertedAt).to.be.instanceOf(Date);
      expect(light).to.deep.equal(full.map(expectedSummary));
      for (const summary of light) {
        for (const array of ['windowBefore', 'windowAfter', 'archivedEventIds', 'addedEventIds', 'removedEvents']) {
          expect(summary).not.to.have.property(array);
        }
      }
    });

    it('the store answers the light form itself: its summaries equal the full records, counted', async function () {
      const id = await compactedTwice(service);
      const summaries = await repository.listCompactionSummaries!(id);
      expect(summaries).to.deep.equal((await repository.listCompactions(id)).map(expectedSummary));
      expect(summaries[1]!.archivedEventCount).to.be.greaterThan(0);
    });

    it('keeps the whole record by default and with eventIds: true', async function () {
      const id = await compactedTwice(service);
      const [byDefault] = await service.listCompactions(id);
      const [explicit] = await service.listCompactions(id, { eventIds: true });
      expect(byDefault!.windowBefore.length).to.be.greaterThan(0);
      expect(explicit).to.deep.equal(byDefault);
    });

    it('a session without compactions lists none; another user is refused; eventIds must be a boolean', async function () {
      const { id } = await service.create({ userId: 'alice' });
      expect(await service.listCompactions(id, { eventIds: false })).to.deep.equal([]);
      await expectRejects(service.listCompactions(id, { eventIds: false, userId: 'mallory' }), Error, 'mallory');
      await expectRejects(
        service.listCompactions(id, { eventIds: 'no' as unknown as boolean }),
        InvalidArgumentError,
        'eventIds must be a boolean',
      );
    });
  });
}

describe('listCompactions without event ids on Redis, records written before summaries', function () {
  this.timeout(30_000);
  let client: Redis;
  let prefix: string;
  before(async function () {
    await requireService(this, 'Redis', probeRedis);
    client = new Redis(REDIS_URL);
    prefix = freshRedisPrefix();
  });
  after(async () => {
    if (client === undefined) return;
    await deleteRedisKeys(client, prefix);
    client.disconnect();
  });

  it('counts a record that has no stored summary on the server, and stores its summary for the next listing', async function () {
    const repository = new RedisSessionRepository({ client, prefix });
    const service = new DefaultSessionService(repository, { logger: silentLogger, tokenCountEstimator: est });
    const id = await compactedTwice(service);
    const key = `${prefix}:{${id}}:compactions`;
    const full = await service.listCompactions(id);
    // What a release before summaries left: the record and its reverted mark, no 's:' field.
    expect(await client.hdel(key, ...full.map((r) => `s:${r.id}`))).to.equal(2);
    expect(await service.listCompactions(id, { eventIds: false })).to.deep.equal(full.map(expectedSummary));
    expect(await client.hexists(key, `s:${full[0]!.id}`)).to.equal(1);
    expect(await service.listCompactions(id, { eventIds: false })).to.deep.equal(full.map(expectedSummary));
  });
});

describe('listCompactions without event ids on PostgreSQL, records written before the summary column', function () {
  this.timeout(30_000);
  const prefix = freshPostgresPrefix();
  const fixture = postgresPoolFixture(prefix);

  it('summarises rows without a stored summary on the server, before and after the migration; new rows store one', async function () {
    const pool = fixture.pool();
    await migratePostgresBelow(pool, prefix, COMPACTION_SUMMARY_SCHEMA_VERSION);
    const old = new PostgresSessionRepository({ pool, prefix, initializeSchema: false, logger: silentLogger });
    const oldService = new DefaultSessionService(old, { logger: silentLogger, tokenCountEstimator: est });
    const id = await compactedTwice(oldService);
    const full = await oldService.listCompactions(id);
    expect(await oldService.listCompactions(id, { eventIds: false })).to.deep.equal(full.map(expectedSummary));

    const migrated = new PostgresSessionRepository({ pool, prefix, logger: silentLogger });
    // The summary column's version and every later one.
    expect(await migrated.migrate()).to.deep.equal(
      POSTGRES_MIGRATIONS.map((m) => m.version).filter((v) => v >= COMPACTION_SUMMARY_SCHEMA_VERSION),
    );
    const service = new DefaultSessionService(migrated, { logger: silentLogger, tokenCountEstimator: est });
    expect(await service.listCompactions(id, { eventIds: false })).to.deep.equal(full.map(expectedSummary));
    const later = await compactedTwice(service);
    const stored = await pool.query(`SELECT count(*)::int AS n FROM ${prefix}_compactions WHERE summary IS NOT NULL`);
    expect(stored.rows).to.deep.equal([{ n: 2 }]);
    const laterFull = await service.listCompactions(later);
    expect(await service.listCompactions(later, { eventIds: false })).to.deep.equal(laterFull.map(expectedSummary));
  });
});

describe('listCompactions without event ids on SQLite, records written before the summary column', function () {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-compaction-summaries-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('summarises rows without a stored summary in the database, before and after the migration; new rows store one', async function () {
    const path = join(dir, 'v10.db');
    const tables = sqliteTables('session_compaction');
    const db = new Database(path);
    migrateSqlite(
      db,
      tables,
      path,
      silentLogger,
      SQLITE_MIGRATIONS.filter((m) => m.version < COMPACTION_SUMMARY_SCHEMA_VERSION),
    );
    db.close();
    const old = new SqliteSessionRepository({ path, initializeSchema: false, logger: silentLogger });
    const oldService = new DefaultSessionService(old, { logger: silentLogger, tokenCountEstimator: est });
    const id = await compactedTwice(oldService);
    const full = await oldService.listCompactions(id);
    expect(await oldService.listCompactions(id, { eventIds: false })).to.deep.equal(full.map(expectedSummary));
    await old.close();

    const migrated = new SqliteSessionRepository({ path, logger: silentLogger });
    try {
      const service = new DefaultSessionService(migrated, { logger: silentLogger, tokenCountEstimator: est });
      expect(await service.listCompactions(id, { eventIds: false })).to.deep.equal(full.map(expectedSummary));
      const later = await compactedTwice(service);
      const laterFull = await service.listCompactions(later);
      expect(await service.listCompactions(later, { eventIds: false })).to.deep.equal(laterFull.map(expectedSummary));
    } finally {
      await migrated.close();
    }
    const check = new Database(path, { readonly: true });
    try {
      const stored = check.prepare(`SELECT count(*) AS n FROM ${tables.compactions} WHERE summary IS NOT NULL`).get();
      expect(stored).to.deep.equal({ n: 2 });
    } finally {
      check.close();
    }
  });
});

describe('listCompactions without event ids on a repository without listCompactionSummaries', function () {
  it('summarises the whole records it lists (a third-party CompactionRecordRepository keeps working)', async function () {
    const store = new InMemorySessionRepository();
    // What a repository written before summaries offers: listCompactions and revertCompactionEvents only.
    const older = new Proxy(store, {
      get: (target, key) => (key === 'listCompactionSummaries' ? undefined : Reflect.get(target, key, target)),
    });
    const service = new DefaultSessionService(older, { logger: silentLogger, tokenCountEstimator: est });
    const id = await compactedTwice(service);
    const full = await service.listCompactions(id);
    expect(await service.listCompactions(id, { eventIds: false })).to.deep.equal(full.map(expectedSummary));
  });
});
