/**
 * The purge generation (SQLite schema version 6, PostgreSQL 5) on a store written before it: until the
 * migration, getEventLogState reports the version alone (generation null) and purges work uncounted, with
 * one warning; after it, data and versions are unchanged, every session starts at generation 0, and purges
 * count — also through an instance opened before the migration ran elsewhere. SQLite always; PostgreSQL
 * when reachable.
 */
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DefaultSessionService,
  EventFilter,
  Messages,
  PostgresSessionRepository,
  SlidingWindowCompactionStrategy,
  SqliteSessionRepository,
  type Logger,
  type SessionRepository,
} from 'session-compaction';
import type { EventLogStateRepository, RetentionRepository } from 'session-compaction/spi';
import { POSTGRES_PURGE_GENERATION_SCHEMA_VERSION } from '../../src/backends/postgres/schema.js';
import { migrateSqlite } from '../../src/backends/sqlite/migrator.js';
import { SQLITE_MIGRATIONS, SQLITE_PURGE_GENERATION_SCHEMA_VERSION, sqliteTables } from '../../src/backends/sqlite/schema.js';
import { freshPostgresPrefix, migratePostgresBelow, postgresPoolFixture } from '../support/postgres.js';
import { silentLogger } from '../summarization/support.js';

/** A logger that keeps the warnings, to see the one that says purges go unseen until the migration. */
type PurgingRepository = SessionRepository & EventLogStateRepository & RetentionRepository;

function warningsLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, error() {}, info() {}, debug() {}, warn: (message: string) => void warnings.push(message) };
}

/** A session with archived history (appends, one compaction), written through `repository`. */
async function withArchive(repository: SessionRepository): Promise<string> {
  const service = new DefaultSessionService(repository, { logger: silentLogger });
  const { id } = await service.create({ userId: 'alice' });
  for (let i = 0; i < 5; i++) {
    await service.appendMessage(id, Messages.user(`q${i}`));
    await service.appendMessage(id, Messages.assistant(`a${i}`));
  }
  const result = await service.compact(
    id,
    () => true,
    new SlidingWindowCompactionStrategy({ maxEvents: 2, cutWithinTurn: 'never' }),
  );
  expect(result.isNoop()).to.equal(false);
  return id;
}

/**
 * `old` is on the schema before the purge generation; `migrate` brings the store to the latest version and
 * returns an instance opened after it.
 */
async function expectUncountedThenCounted(
  old: PurgingRepository,
  logger: Logger & { warnings: string[] },
  migrate: () => Promise<PurgingRepository>,
): Promise<void> {
  const id = await withArchive(old);
  const version = await old.getEventVersion(id);
  expect(await old.getEventLogState(id)).to.deep.equal({ version, purgeGeneration: null });
  expect(await old.purgeArchivedEvents(id, { keepLast: 4, limit: 2 })).to.have.length(2);
  expect(await old.getEventLogState(id)).to.deep.equal({ version, purgeGeneration: null });
  expect(logger.warnings.filter((w) => /archive purges/.test(w))).to.have.length(1);
  const before = await old.findEvents(id, EventFilter.all());

  const migrated = await migrate();
  expect(await migrated.findEvents(id, EventFilter.all())).to.deep.equal(before);
  expect(await migrated.getEventLogState(id)).to.deep.equal({ version, purgeGeneration: 0 });
  expect(await migrated.purgeArchivedEvents(id, { keepLast: 2, limit: 1 })).to.have.length(1);
  expect(await migrated.getEventLogState(id)).to.deep.equal({ version, purgeGeneration: 1 });
  // The instance opened before the migration sees the column now: it reads the generation, and its purges count.
  expect(await old.getEventLogState(id)).to.deep.equal({ version, purgeGeneration: 1 });
  expect(await old.purgeArchivedEvents(id, { keepLast: 0, limit: 100 })).to.not.deep.equal([]);
  expect(await migrated.getEventLogState(id)).to.deep.equal({ version, purgeGeneration: 2 });
}

describe('purge generation on a SQLite database written before schema version 6', function () {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-purge-generation-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const from of [4, 5]) {
    it(`at version ${from}: uncounted purges and the version alone until migrated; then generation 0, counted by every instance`, async function () {
      const path = join(dir, `v${from}.db`);
      const db = new Database(path);
      db.pragma('journal_mode = WAL');
      migrateSqlite(
        db,
        sqliteTables('session_compaction'),
        path,
        silentLogger,
        SQLITE_MIGRATIONS.filter((m) => m.version <= from),
      );
      db.close();
      const logger = warningsLogger();
      const old = new SqliteSessionRepository({ path, initializeSchema: false, logger });
      const opened: SqliteSessionRepository[] = [old];
      try {
        expect((await old.schemaStatus()).pending.map((p) => p.version)).to.deep.equal(
          SQLITE_MIGRATIONS.filter((m) => m.version > from).map((m) => m.version),
        );
        await expectUncountedThenCounted(old, logger, async () => {
          const migrated = new SqliteSessionRepository({ path, logger: silentLogger });
          opened.push(migrated);
          await migrated.findById('x');
          expect((await migrated.schemaStatus()).applied).to.include(SQLITE_PURGE_GENERATION_SCHEMA_VERSION);
          return migrated;
        });
      } finally {
        for (const r of opened) await r.close();
      }
    });
  }
});

describe('purge generation on a PostgreSQL schema written at version 4', function () {
  this.timeout(30_000);
  const prefix = freshPostgresPrefix();
  const fixture = postgresPoolFixture(prefix);

  it('uncounted purges and the version alone until migrated; then generation 0, counted by every instance', async function () {
    const pool = fixture.pool();
    await migratePostgresBelow(pool, prefix, POSTGRES_PURGE_GENERATION_SCHEMA_VERSION);
    const logger = warningsLogger();
    const old = new PostgresSessionRepository({ pool, prefix, initializeSchema: false, logger });
    await expectUncountedThenCounted(old, logger, async () => {
      const migrated = new PostgresSessionRepository({ pool, prefix, logger: silentLogger });
      // This version first, then any later one (the bounded search index).
      expect((await migrated.migrate())[0]).to.equal(POSTGRES_PURGE_GENERATION_SCHEMA_VERSION);
      return migrated;
    });
  });
});
