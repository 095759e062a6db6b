/**
 * The user-erasure marks' own table (schema version 10 on SQLite and PostgreSQL) on a store written before
 * it, where the marks were tombstone rows under 'user-erasure:<owner hash>': after the migration a mark still
 * running blocks its user until it ends, an expired one blocks nothing, no mark is left among the
 * tombstones, and real tombstones are untouched. SQLite always; PostgreSQL when reachable.
 */
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IllegalStateError, PostgresSessionRepository, Session, SqliteSessionRepository } from 'session-compaction';
import { ownerHash, USER_ERASURE_SCHEMA_VERSION } from 'session-compaction/spi';
import { migrateSqlite } from '../../src/backends/sqlite/migrator.js';
import { SQLITE_MIGRATIONS, sqliteTables } from '../../src/backends/sqlite/schema.js';
import { freshPostgresPrefix, migratePostgresBelow, postgresPoolFixture } from '../support/postgres.js';
import { rejection } from '../support/rejection.js';
import { silentLogger } from '../summarization/support.js';

const MINUTE = 60_000;
/** A mark as releases before version 10 wrote it: a tombstone row with the owner hash 'user-erasure'. */
const legacyMark = (userId: string, until: number) => ({
  id: `user-erasure:${ownerHash(userId)}`,
  owner_hash: 'user-erasure',
  until,
});

type MarkingRepository = SqliteSessionRepository | PostgresSessionRepository;

async function expectMarksMoved(repository: MarkingRepository, running: string, expired: string, deleted: string) {
  const fresh = (userId: string) => repository.saveIfAbsent(Session.create({ id: `s-${userId}`, userId }));
  const refused = await rejection(fresh(running));
  expect(refused).to.be.instanceOf(IllegalStateError);
  expect(refused.message).to.include("its user's data is being erased");
  expect(await fresh(expired)).to.equal(true);
  expect(await repository.findTombstone(legacyMark(running, 0).id)).to.equal(null);
  expect((await repository.findTombstone(deleted))?.ownerHash).to.equal(ownerHash('alice'));
  await repository.endUserErasure(running);
  expect(await fresh(running)).to.equal(true);
}

describe('user erasure marks on a SQLite database written before schema version 10', function () {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-user-erasure-marks-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('moves a running mark (it still blocks its user) and an expired one out of the tombstones; tombstones stay', async function () {
    const path = join(dir, 'v9.db');
    const tables = sqliteTables('session_compaction');
    const db = new Database(path);
    migrateSqlite(
      db,
      tables,
      path,
      silentLogger,
      SQLITE_MIGRATIONS.filter((m) => m.version < USER_ERASURE_SCHEMA_VERSION),
    );
    const insert = db.prepare(`INSERT INTO ${tables.tombstones} (id, owner_hash, deleted_at, expires_at) VALUES (?, ?, ?, ?)`);
    const now = Date.now();
    for (const [userId, until] of [
      ['bob', now + MINUTE],
      ['carol', now - MINUTE],
    ] as const) {
      const mark = legacyMark(userId, until);
      insert.run(mark.id, mark.owner_hash, now - 2 * MINUTE, mark.until);
    }
    insert.run('deleted-session', ownerHash('alice'), now, null);
    db.close();

    const repository = new SqliteSessionRepository({ path, logger: silentLogger });
    try {
      await expectMarksMoved(repository, 'bob', 'carol', 'deleted-session');
      expect((await repository.schemaStatus()).applied).to.include(USER_ERASURE_SCHEMA_VERSION);
    } finally {
      await repository.close();
    }
    const after = new Database(path, { readonly: true });
    try {
      const marks = after.prepare(`SELECT count(*) AS n FROM ${tables.tombstones} WHERE owner_hash = 'user-erasure'`).get();
      expect(marks).to.deep.equal({ n: 0 });
    } finally {
      after.close();
    }
  });
});

describe('user erasure marks on a PostgreSQL schema written before version 10', function () {
  this.timeout(30_000);
  const prefix = freshPostgresPrefix();
  const fixture = postgresPoolFixture(prefix);

  it('moves a running mark (it still blocks its user) and an expired one out of the tombstones; tombstones stay', async function () {
    const pool = fixture.pool();
    await migratePostgresBelow(pool, prefix, USER_ERASURE_SCHEMA_VERSION);
    const insert = `INSERT INTO ${prefix}_tombstones (id, owner_hash, deleted_at, expires_at) VALUES ($1, $2, $3, $4)`;
    const now = Date.now();
    for (const [userId, until] of [
      ['bob', now + MINUTE],
      ['carol', now - MINUTE],
    ] as const) {
      const mark = legacyMark(userId, until);
      await pool.query(insert, [mark.id, mark.owner_hash, new Date(now - 2 * MINUTE), new Date(mark.until)]);
    }
    await pool.query(insert, ['deleted-session', ownerHash('alice'), new Date(now), null]);

    const repository = new PostgresSessionRepository({ pool, prefix, logger: silentLogger });
    expect(await repository.migrate()).to.include(USER_ERASURE_SCHEMA_VERSION);
    await expectMarksMoved(repository, 'bob', 'carol', 'deleted-session');
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${prefix}_tombstones WHERE owner_hash = 'user-erasure'`);
    expect(rows).to.deep.equal([{ n: 0 }]);
  });
});
