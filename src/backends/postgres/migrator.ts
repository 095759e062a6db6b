import type pg from 'pg';
import type { Logger } from '../../logging.js';
import { latestVersion, pendingMigrations, unknownVersions, type SchemaStatus } from '../../repository/schemaMigrations.js';
import { MIGRATIONS, type Migration, type PostgresTables } from './schema.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

/** Versions recorded in the migrations table; empty when the table does not exist yet. */
async function appliedVersions(db: Queryable, t: PostgresTables): Promise<number[]> {
  const { rows } = await db.query<{ exists: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS exists`, [t.migrations]);
  if (rows[0]?.exists !== true) return [];
  const done = await db.query<{ version: number }>(`SELECT version FROM ${t.migrations} ORDER BY version`);
  return done.rows.map((r) => Number(r.version));
}

function location(t: PostgresTables): string {
  return `prefix '${t.prefix}'`;
}

export async function postgresSchemaStatus(
  db: Queryable,
  t: PostgresTables,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<SchemaStatus> {
  const applied = await appliedVersions(db, t);
  const unknown = unknownVersions(migrations, applied);
  const pending = unknown.length > 0 ? [] : pendingMigrations(migrations, applied, 'postgres', location(t));
  return {
    backend: 'postgres',
    location: location(t),
    applied,
    pending: pending.map((m) => ({ version: m.version, name: m.name, statements: m.statements(t) })),
    latest: latestVersion(migrations),
    unknown,
  };
}

/** Throws SchemaVersionError when the database is newer than this code; returns the pending versions. */
export async function postgresPendingVersions(
  db: Queryable,
  t: PostgresTables,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  return pendingMigrations(migrations, await appliedVersions(db, t), 'postgres', location(t)).map((m) => m.version);
}

/**
 * Applies every pending migration, lowest version first, inside the caller's transaction (PostgreSQL DDL is
 * transactional: a failing step leaves the schema as it was). Concurrent callers (several app instances
 * starting at once) serialise on a transaction-scoped advisory lock, so each migration runs once.
 */
export async function migratePostgres(
  client: Queryable,
  t: PostgresTables,
  logger: Logger,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [t.migrations]);
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${t.migrations} (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
  );
  const pending = pendingMigrations(migrations, await appliedVersions(client, t), 'postgres', location(t));
  for (const m of pending) {
    for (const statement of m.statements(t)) await client.query(statement);
    await client.query(`INSERT INTO ${t.migrations} (version, name) VALUES ($1, $2)`, [m.version, m.name]);
  }
  const ran = pending.map((m) => m.version);
  if (ran.length > 0) logger.info('applied schema migrations', { prefix: t.prefix, versions: ran });
  return ran;
}
