import Database from 'better-sqlite3';
import { expect } from 'chai';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDefaultLogger, IllegalStateError, SchemaVersionError, SqliteSessionRepository } from 'session-compaction';
import { pendingMigrations } from '../../src/repository/schemaMigrations.js';
import { migrateSqlite, sqliteSchemaStatus } from '../../src/backends/sqlite/migrator.js';
import { SQLITE_MIGRATIONS, sqliteTables, type SqliteMigration } from '../../src/backends/sqlite/schema.js';

const logger = createDefaultLogger({ silent: true });
const latest = Math.max(...SQLITE_MIGRATIONS.map((m) => m.version));

describe('schema migrations', function () {
  describe('pendingMigrations', function () {
    it('returns exactly the known versions not applied, lowest first, whatever the list order', function () {
      fc.assert(
        fc.property(
          fc.uniqueArray(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 12 }),
          fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
          (versions, appliedMask) => {
            const known = versions.map((version) => ({ version }));
            const applied = versions.filter((_, i) => appliedMask[i]);
            const pending = pendingMigrations(known, applied, 'sqlite', 'x').map((m) => m.version);
            expect(pending).to.deep.equal(versions.filter((v) => !applied.includes(v)).sort((a, b) => a - b));
          },
        ),
      );
    });

    it('refuses a database recording a version the code does not know, naming it and the supported one', function () {
      let error: unknown;
      try {
        pendingMigrations([{ version: 1 }, { version: 2 }], [1, 2, 7], 'postgres', "prefix 'p'");
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(SchemaVersionError).and.instanceOf(IllegalStateError);
      const e = error as SchemaVersionError;
      expect(e.unknownVersions).to.deep.equal([7]);
      expect(e.supportedVersion).to.equal(2);
      expect(e.backend).to.equal('postgres');
      expect(e.message).to.include('version 7, newer than this version of session-compaction supports (2');
    });

    it('rejects a migration list with a duplicate version', function () {
      expect(() => pendingMigrations([{ version: 1 }, { version: 1 }], [], 'redis', 'x')).to.throw(
        IllegalStateError,
        /version 1 is not a unique positive integer/,
      );
    });
  });

  describe('SQLite', function () {
    let dir: string;
    let n = 0;
    const file = () => join(dir, `m-${n++}.db`);
    before(() => (dir = mkdtempSync(join(tmpdir(), 'sqlite-migrations-'))));
    after(() => rmSync(dir, { recursive: true, force: true }));

    const t = sqliteTables('m');
    const extra = (version: number, sql?: string): SqliteMigration => ({
      version,
      name: `extra ${version}`,
      sql: (tables) => sql ?? `CREATE TABLE ${tables.sessions}_extra${version} (x INTEGER) STRICT;`,
    });
    const tablesOf = (db: Database.Database) =>
      (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all() as string[]).filter(
        (name) => !name.startsWith('sqlite_'),
      );
    const versionsOf = (db: Database.Database) =>
      db.prepare(`SELECT version FROM ${t.migrations} ORDER BY version`).pluck().all() as number[];

    it('dry run lists every pending version and writes nothing to a new file', async function () {
      const path = file();
      const repo = new SqliteSessionRepository({ path, prefix: 'm', initializeSchema: false });
      expect(await repo.migrate({ dryRun: true })).to.deep.equal(SQLITE_MIGRATIONS.map((m) => m.version).sort((a, b) => a - b));
      const status = await repo.schemaStatus();
      expect(status.applied).to.deep.equal([]);
      expect(status.pending[0]!.statements[0]).to.include('CREATE TABLE m_sessions');
      await repo.close();
      const db = new Database(path);
      expect(tablesOf(db)).to.deep.equal([]);
      db.close();
    });

    it('migrate applies every version once; the next call applies none', async function () {
      const repo = new SqliteSessionRepository({ path: file(), prefix: 'm', initializeSchema: false });
      expect(await repo.migrate()).to.have.length(SQLITE_MIGRATIONS.length);
      expect(await repo.migrate()).to.deep.equal([]);
      expect((await repo.schemaStatus()).applied.at(-1)).to.equal(latest);
      await repo.close();
    });

    it('applies a missing lower version even when a higher one is already applied', function () {
      const db = new Database(file());
      try {
        migrateSqlite(db, t, 'test', logger, [...SQLITE_MIGRATIONS, extra(900)]);
        expect(migrateSqlite(db, t, 'test', logger, [...SQLITE_MIGRATIONS, extra(900), extra(800)])).to.deep.equal([800]);
        expect(versionsOf(db).slice(-2)).to.deep.equal([800, 900]);
        expect(tablesOf(db)).to.include('m_sessions_extra800');
      } finally {
        db.close();
      }
    });

    it('a failing step leaves the schema and the recorded versions as they were', function () {
      const db = new Database(file());
      try {
        migrateSqlite(db, t, 'test', logger);
        const before = tablesOf(db);
        const broken = extra(901, `CREATE TABLE m_half (x INTEGER); SELECT no_such_function();`);
        expect(() => migrateSqlite(db, t, 'test', logger, [...SQLITE_MIGRATIONS, extra(900), broken])).to.throw(
          /no_such_function/,
        );
        expect(tablesOf(db)).to.deep.equal(before);
        expect(versionsOf(db)).to.not.include(900);
      } finally {
        db.close();
      }
    });

    it('refuses a file written by a newer version with SchemaVersionError and leaves it untouched', async function () {
      const path = file();
      const seed = new SqliteSessionRepository({ path, prefix: 'm' });
      await seed.save({ id: 's', userId: 'u', createdAt: new Date(), expiresAt: null, metadata: {} });
      await seed.close();
      const raw = new Database(path);
      raw.prepare(`INSERT INTO m_migrations (version, name, applied_at) VALUES (9999, 'from the future', 0)`).run();
      raw.close();

      for (const initializeSchema of [true, false]) {
        const repo = new SqliteSessionRepository({ path, prefix: 'm', initializeSchema });
        let error: unknown;
        try {
          await repo.findById('s');
        } catch (e) {
          error = e;
        }
        expect(error, `initializeSchema ${initializeSchema}`).to.be.instanceOf(SchemaVersionError);
        expect((error as SchemaVersionError).unknownVersions).to.deep.equal([9999]);
        let migrateError: unknown;
        await repo.migrate().catch((e: unknown) => (migrateError = e));
        expect(migrateError).to.be.instanceOf(SchemaVersionError);
        expect((await repo.schemaStatus()).unknown).to.deep.equal([9999]);
        await repo.close();
      }
      const after = new Database(path);
      expect(versionsOf(after)).to.deep.equal([...SQLITE_MIGRATIONS.map((m) => m.version).sort((a, b) => a - b), 9999]);
      after.close();
    });

    it('status of a migrated file has nothing pending and names the latest version', function () {
      const db = new Database(file());
      try {
        migrateSqlite(db, t, 'test', logger);
        const status = sqliteSchemaStatus(db, t, 'test');
        expect(status).to.include({ backend: 'sqlite', latest });
        expect(status.pending).to.deep.equal([]);
        expect(status.unknown).to.deep.equal([]);
      } finally {
        db.close();
      }
    });
  });
});
