/**
 * Schema version 4 (compaction records) on a database written at version 3: the data written before the
 * migration reads back unchanged, compactions keep working while it is not migrated (unrecorded), and after
 * the migration they are recorded and revertible. SQLite always; PostgreSQL when reachable.
 */
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DefaultSessionService,
  EventFilter,
  IllegalStateError,
  Messages,
  PostgresSessionRepository,
  SlidingWindowCompactionStrategy,
  SqliteSessionRepository,
  type SessionRepository,
} from 'session-compaction';
import { COMPACTION_RECORD_SCHEMA_VERSION } from 'session-compaction/spi';
import { MIGRATIONS } from '../../src/backends/postgres/schema.js';
import { migrateSqlite } from '../../src/backends/sqlite/migrator.js';
import { SQLITE_MIGRATIONS, sqliteTables } from '../../src/backends/sqlite/schema.js';
import { freshPostgresPrefix, migratePostgresBelow, postgresPoolFixture } from '../support/postgres.js';
import { expectRejects } from '../support/fixtures.js';
import { silentLogger } from '../summarization/support.js';

const always = () => true;
const sliding = () => new SlidingWindowCompactionStrategy({ maxEvents: 2, cutWithinTurn: 'never' });

/** A session with history written through a repository on the version-3 schema: appends and one compaction. */
async function writeAtVersion3(repository: SessionRepository): Promise<string> {
  const service = new DefaultSessionService(repository, { logger: silentLogger });
  const { id } = await service.create({ userId: 'alice' });
  for (let i = 0; i < 4; i++) {
    await service.appendMessage(id, Messages.user(`q${i}`));
    await service.appendMessage(id, Messages.assistant(`a${i}`));
  }
  // Not migrated: the compaction works, unrecorded.
  const result = await service.compact(id, always, sliding());
  expect(result.isNoop()).to.equal(false);
  await expectRejects(service.listCompactions(id), IllegalStateError, 'call migrate()');
  return id;
}

async function expectMigratedAndRecorded(repository: SessionRepository, id: string, before: unknown): Promise<void> {
  const service = new DefaultSessionService(repository, { logger: silentLogger });
  expect(await service.getEvents(id)).to.deep.equal(before);
  expect(await service.listCompactions(id)).to.deep.equal([]);
  const window = await service.getEvents(id, EventFilter.active());
  for (let i = 0; i < 3; i++) await service.appendMessage(id, Messages.user(`later ${i}`));
  const restored = await service.getEvents(id, EventFilter.active());
  await service.compact(id, always, sliding());
  const [record] = await service.listCompactions(id);
  expect(record!.windowBefore).to.deep.equal(restored.map((e) => e.id));
  await service.revertCompaction(id, record!.id);
  expect((await service.getEvents(id, EventFilter.active())).map((e) => e.id)).to.deep.equal(restored.map((e) => e.id));
  expect(window.length).to.be.lessThan(restored.length);
}

describe('compaction records on a SQLite database written at schema version 3', function () {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-v3-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('compacts unrecorded before the migration; migrates to version 4 on first use, data unchanged; then records and reverts', async function () {
    const path = join(dir, 'v3.db');
    const db = new Database(path);
    migrateSqlite(
      db,
      sqliteTables('session_compaction'),
      path,
      silentLogger,
      SQLITE_MIGRATIONS.filter((m) => m.version < COMPACTION_RECORD_SCHEMA_VERSION),
    );
    db.close();
    const old = new SqliteSessionRepository({ path, initializeSchema: false, logger: silentLogger });
    const id = await writeAtVersion3(old);
    const before = await old.findEvents(id, EventFilter.all());
    const versionBefore = await old.getEventVersion(id);
    expect((await old.schemaStatus()).pending.map((p) => p.version)).to.deep.equal(
      SQLITE_MIGRATIONS.filter((m) => m.version >= COMPACTION_RECORD_SCHEMA_VERSION).map((m) => m.version),
    );
    await old.close();

    const migrated = new SqliteSessionRepository({ path, logger: silentLogger });
    try {
      expect(await migrated.getEventVersion(id)).to.equal(versionBefore);
      await expectMigratedAndRecorded(migrated, id, before);
      expect((await migrated.schemaStatus()).applied).to.include(COMPACTION_RECORD_SCHEMA_VERSION);
    } finally {
      await migrated.close();
    }
  });
});

describe('compaction records on a PostgreSQL schema written at version 3', function () {
  this.timeout(30_000);
  const prefix = freshPostgresPrefix();
  const fixture = postgresPoolFixture(prefix);

  it('compacts unrecorded before the migration; migrates to version 4, data unchanged; then records and reverts', async function () {
    const pool = fixture.pool();
    await migratePostgresBelow(pool, prefix, COMPACTION_RECORD_SCHEMA_VERSION);
    const old = new PostgresSessionRepository({ pool, prefix, initializeSchema: false, logger: silentLogger });
    const id = await writeAtVersion3(old);
    const before = await old.findEvents(id, EventFilter.all());
    const migrated = new PostgresSessionRepository({ pool, prefix, logger: silentLogger });
    expect(await migrated.migrate()).to.deep.equal(
      MIGRATIONS.filter((m) => m.version >= COMPACTION_RECORD_SCHEMA_VERSION).map((m) => m.version),
    );
    await expectMigratedAndRecorded(migrated, id, before);
    // The instance created before the migration sees the table now and records too.
    const service = new DefaultSessionService(old, { logger: silentLogger });
    for (let i = 0; i < 3; i++) await service.appendMessage(id, Messages.user(`more ${i}`));
    await service.compact(id, always, sliding());
    expect(await service.listCompactions(id)).to.have.length(2);
  });
});
