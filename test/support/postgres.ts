import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migratePostgres } from '../../src/backends/postgres/migrator.js';
import { MIGRATIONS, postgresTables } from '../../src/backends/postgres/schema.js';
import { createDefaultLogger } from 'session-compaction';
import { dropPostgresStore } from '../../benchmarks/support/postgres.js';
import { PG_URL, requireService } from './services.js';

/** Resolves when the test server accepts a connection (for requireService). */
export async function probePostgres(): Promise<void> {
  const probe = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  await probe.connect();
  await probe.end();
}

/** A prefix no other run uses, so parallel runs on one server never collide. */
export function freshPostgresPrefix(): string {
  return `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/**
 * Drops every table and function the migrations created under `prefix`, whatever they are: the hand-kept list
 * this replaced fell behind the migrations (the user-erasures table, the searchable-text function) and left
 * them behind on the shared server after every run.
 */
export async function dropPostgresTables(pool: pg.Pool, prefix: string): Promise<void> {
  await dropPostgresStore(pool, prefix);
}

/**
 * A pool on the test server, skipped (or failed under CI) when it is unreachable; `after` drops the tables
 * under each prefix (a list may grow while the suite runs) and ends the pool.
 */
export function postgresPoolFixture(
  prefixes: string | readonly string[],
  options: { max?: number } = {},
): { pool: () => pg.Pool } {
  let pool: pg.Pool | undefined;
  before(async function () {
    await requireService(this, 'PostgreSQL', probePostgres);
    pool = new pg.Pool({ connectionString: PG_URL, max: options.max ?? 3 });
  });
  after(async function () {
    if (pool === undefined) return;
    for (const prefix of typeof prefixes === 'string' ? [prefixes] : prefixes) await dropPostgresTables(pool, prefix);
    await pool.end();
  });
  return { pool: () => pool! };
}

/** Writes the schema under `prefix` as a release that stopped before `version` left it. */
export async function migratePostgresBelow(pool: pg.Pool, prefix: string, version: number): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await migratePostgres(
      client,
      postgresTables(prefix),
      createDefaultLogger({ silent: true }),
      MIGRATIONS.filter((m) => m.version < version),
    );
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}
