import type Database from 'better-sqlite3';
import type { Logger } from '../../logging.js';
import { latestVersion, pendingMigrations, unknownVersions, type SchemaStatus } from '../../repository/schemaMigrations.js';
import { SQLITE_MIGRATIONS, type SqliteMigration, type SqliteTables } from './schema.js';

/** Versions recorded in the migrations table; empty when the table does not exist yet. */
function appliedVersions(db: Database.Database, t: SqliteTables): number[] {
  const exists = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(t.migrations);
  if (exists === undefined) return [];
  return (db.prepare(`SELECT version FROM ${t.migrations} ORDER BY version`).pluck().all() as number[]).map(Number);
}

export function sqliteSchemaStatus(
  db: Database.Database,
  t: SqliteTables,
  location: string,
  migrations: readonly SqliteMigration[] = SQLITE_MIGRATIONS,
): SchemaStatus {
  const applied = appliedVersions(db, t);
  const unknown = unknownVersions(migrations, applied);
  const pending = unknown.length > 0 ? [] : pendingMigrations(migrations, applied, 'sqlite', location);
  return {
    backend: 'sqlite',
    location,
    applied,
    pending: pending.map((m) => ({ version: m.version, name: m.name, statements: [m.sql(t).trim()] })),
    latest: latestVersion(migrations),
    unknown,
  };
}

/** Throws SchemaVersionError when the database is newer than this code; returns the pending versions. */
export function sqlitePendingVersions(
  db: Database.Database,
  t: SqliteTables,
  location: string,
  migrations: readonly SqliteMigration[] = SQLITE_MIGRATIONS,
): number[] {
  return pendingMigrations(migrations, appliedVersions(db, t), 'sqlite', location).map((m) => m.version);
}

/**
 * Applies every pending migration, lowest version first, in one IMMEDIATE transaction: two processes
 * starting together migrate once, and a failing step leaves the database as it was. A database recording
 * a version this code does not know is refused before anything is written.
 */
export function migrateSqlite(
  db: Database.Database,
  t: SqliteTables,
  location: string,
  logger: Logger,
  migrations: readonly SqliteMigration[] = SQLITE_MIGRATIONS,
): number[] {
  return db
    .transaction((): number[] => {
      db.exec(
        `CREATE TABLE IF NOT EXISTS ${t.migrations} (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`,
      );
      const pending = pendingMigrations(migrations, appliedVersions(db, t), 'sqlite', location);
      const record = db.prepare(`INSERT INTO ${t.migrations} (version, name, applied_at) VALUES (?, ?, ?)`);
      for (const m of pending) {
        db.exec(m.sql(t));
        record.run(m.version, m.name, Date.now());
      }
      const applied = pending.map((m) => m.version);
      if (applied.length > 0) logger.info('SQLite schema migrated', { path: location, applied });
      return applied;
    })
    .immediate();
}
