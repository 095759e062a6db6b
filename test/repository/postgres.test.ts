import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PostgresSessionRepository } from '../../src/repository/PostgresSessionRepository.js';
import { PG_URL, requireService } from '../support/services.js';
import { repositoryContract } from './contract.js';

/** A prefix no other run uses, so parallel runs on one server never collide. */
export function freshPostgresPrefix(): string {
  return `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export async function dropPostgresTables(pool: pg.Pool, prefix: string): Promise<void> {
  await pool.query(`DROP TABLE IF EXISTS ${prefix}_events, ${prefix}_sessions, ${prefix}_migrations`);
}

describe('PostgresSessionRepository', function () {
  const prefix = freshPostgresPrefix();
  let pool: pg.Pool;

  before(async function () {
    await requireService(this, 'PostgreSQL', async () => {
      const probe = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
      await probe.connect();
      await probe.end();
    });
    pool = new pg.Pool({ connectionString: PG_URL, max: 20 });
  });
  after(async function () {
    if (pool !== undefined) {
      await dropPostgresTables(pool, prefix);
      await pool.end();
    }
  });

  repositoryContract('PostgreSQL', async () => new PostgresSessionRepository({ pool, prefix }));
});
