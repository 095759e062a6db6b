import { expect } from 'chai';
import pg from 'pg';
import { createDefaultLogger, PostgresSessionRepository, SchemaVersionError } from 'session-compaction';
import { migratePostgres } from '../../../src/backends/postgres/migrator.js';
import { MIGRATIONS, postgresTables, type Migration } from '../../../src/backends/postgres/schema.js';
import { PG_URL, requireService } from '../../support/services.js';
import { dropPostgresTables, freshPostgresPrefix, probePostgres } from '../../support/postgres.js';

const logger = createDefaultLogger({ silent: true });
const allVersions = MIGRATIONS.map((m) => m.version).sort((a, b) => a - b);

describe('PostgreSQL schema versions', function () {
  let pool: pg.Pool;
  const prefixes: string[] = [];
  const fresh = () => {
    const p = freshPostgresPrefix();
    prefixes.push(p);
    return p;
  };

  before(async function () {
    await requireService(this, 'PostgreSQL', probePostgres);
    pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  });
  after(async function () {
    if (pool === undefined) return;
    for (const p of prefixes) {
      await pool.query(`DROP TABLE IF EXISTS ${p}_extra800, ${p}_extra900, ${p}_half`);
      await dropPostgresTables(pool, p);
    }
    await pool.end();
  });

  const extra = (version: number, statements?: string[]): Migration => ({
    version,
    name: `extra ${version}`,
    statements: (t) => statements ?? [`CREATE TABLE ${t.prefix}_extra${version} (x INTEGER)`],
  });
  async function inTransaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }
  const versionsOf = async (p: string) =>
    (await pool.query<{ version: number }>(`SELECT version FROM ${p}_migrations ORDER BY version`)).rows.map((r) => r.version);

  it('dry run lists every version of a new prefix and creates nothing', async function () {
    const p = fresh();
    const repo = new PostgresSessionRepository({ pool, prefix: p, initializeSchema: false });
    expect(await repo.migrate({ dryRun: true })).to.deep.equal(allVersions);
    const status = await repo.schemaStatus();
    expect(status.pending[0]!.statements[0]).to.include(`CREATE TABLE ${p}_sessions`);
    const { rows } = await pool.query(`SELECT to_regclass($1) AS t`, [`${p}_migrations`]);
    expect(rows[0].t).to.equal(null);
  });

  it('applies a missing lower version even when a higher one is already applied', async function () {
    const p = fresh();
    const t = postgresTables(p);
    await inTransaction((c) => migratePostgres(c, t, logger, [...MIGRATIONS, extra(900)]));
    const ran = await inTransaction((c) => migratePostgres(c, t, logger, [...MIGRATIONS, extra(900), extra(800)]));
    expect(ran).to.deep.equal([800]);
    expect((await versionsOf(p)).slice(-2)).to.deep.equal([800, 900]);
  });

  it('a failing step rolls the whole migration back', async function () {
    const p = fresh();
    const t = postgresTables(p);
    const broken = extra(901, [`CREATE TABLE ${p}_half (x INTEGER)`, 'SELECT no_such_function()']);
    let error: unknown;
    await inTransaction((c) => migratePostgres(c, t, logger, [...MIGRATIONS, broken])).catch((e: unknown) => (error = e));
    expect(String(error)).to.match(/no_such_function/);
    const { rows } = await pool.query(`SELECT to_regclass($1) AS half, to_regclass($2) AS sessions`, [`${p}_half`, t.sessions]);
    expect(rows[0]).to.deep.equal({ half: null, sessions: null });
  });

  it('refuses tables written by a newer version with SchemaVersionError, with or without initializeSchema', async function () {
    const p = fresh();
    await new PostgresSessionRepository({ pool, prefix: p }).migrate();
    await pool.query(`INSERT INTO ${p}_migrations (version, name) VALUES (9999, 'from the future')`);
    for (const initializeSchema of [true, false]) {
      const repo = new PostgresSessionRepository({ pool, prefix: p, initializeSchema });
      let error: unknown;
      await repo.findById('x').catch((e: unknown) => (error = e));
      expect(error, `initializeSchema ${initializeSchema}`).to.be.instanceOf(SchemaVersionError);
      expect((error as SchemaVersionError).unknownVersions).to.deep.equal([9999]);
      expect((await repo.schemaStatus()).unknown).to.deep.equal([9999]);
    }
    expect(await versionsOf(p)).to.deep.equal([...allVersions, 9999]);
  });
});
