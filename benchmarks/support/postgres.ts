import pg from 'pg';

interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/**
 * Drops every table and function a benchmark's store created under `prefix`, whatever the migrations added: a
 * hand-kept list fell behind when a migration added a table (the compaction records), and the DROP then failed
 * on the foreign key and left the run's tables behind. The prefix is matched literally (LIKE wildcards escaped)
 * and every name is quoted, so only this run's objects go.
 */
export async function dropPostgresStore(db: Queryable, prefix: string): Promise<void> {
  const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}\\_%`;
  const tables = await db.query(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE $1`, [
    pattern,
  ]);
  if (tables.rows.length > 0) {
    const names = tables.rows.map((r) => pg.escapeIdentifier(String(r.tablename))).join(', ');
    await db.query(`DROP TABLE IF EXISTS ${names} CASCADE`);
  }
  const functions = await db.query(
    `SELECT p.oid::regprocedure::text AS signature FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = current_schema() AND p.proname LIKE $1`,
    [pattern],
  );
  for (const row of functions.rows) await db.query(`DROP FUNCTION IF EXISTS ${String(row.signature)} CASCADE`);
}
