import { randomBytes } from 'node:crypto';
import type pg from 'pg';

/** A prefix no other run uses, so parallel runs on one server never collide. */
export function freshPostgresPrefix(): string {
  return `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/** Drops every table and function the migrations create under `prefix` (the trigger goes with its table). */
export async function dropPostgresTables(pool: pg.Pool, prefix: string): Promise<void> {
  await pool.query(
    `DROP TABLE IF EXISTS ${prefix}_compactions, ${prefix}_events, ${prefix}_sessions, ${prefix}_migrations, ${prefix}_tombstones`,
  );
  await pool.query(`DROP FUNCTION IF EXISTS ${prefix}_refuse_tombstoned()`);
}
