/**
 * The stores a chaos run works on, each fresh (a new SQLite file, a new PostgreSQL table prefix, a new Redis
 * key prefix) with the admin connection that kills the workers' connections and cleans up afterwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  PostgresSessionRepository,
  RedisSessionRepository,
  SqliteSessionRepository,
  createDefaultLogger,
} from 'session-compaction';
import { dropPostgresTables, freshPostgresPrefix } from '../support/postgres.js';
import { deleteRedisKeys, freshRedisPrefix } from '../support/redis.js';
import { PG_URL, REDIS_URL } from '../support/services.js';
import type { ChaosOptions } from './chaosRun.js';

const logger = createDefaultLogger({ silent: true });

export type ChaosStore = Omit<ChaosOptions, 'seconds'> & { dispose(): Promise<void> };

export async function chaosStore(backend: ChaosOptions['backend']): Promise<ChaosStore> {
  switch (backend) {
    case 'sqlite': {
      const dir = mkdtempSync(join(tmpdir(), 'chaos-'));
      const path = join(dir, 'chaos.db');
      // Migrated once here, so that the workers never race to create the schema.
      const setup = new SqliteSessionRepository({ path, logger });
      await setup.migrate();
      await setup.close();
      return {
        backend,
        target: path,
        prefix: 'session_compaction',
        open: async () => new SqliteSessionRepository({ path, logger, busyTimeoutMs: 30_000 }),
        dispose: async () => rmSync(dir, { recursive: true, force: true }),
      };
    }
    case 'postgres': {
      const prefix = freshPostgresPrefix();
      const admin = new pg.Pool({ connectionString: PG_URL, max: 3 });
      admin.on('error', () => undefined);
      const setup = new PostgresSessionRepository({ pool: admin, prefix, logger });
      await setup.migrate();
      return {
        backend,
        target: PG_URL,
        prefix,
        open: async () => new PostgresSessionRepository({ pool: admin, prefix, logger }),
        killConnection: async () => {
          const { rows } = await admin.query<{ killed: boolean }>(
            `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
             WHERE application_name LIKE $1 ORDER BY random() LIMIT 1`,
            [`${prefix}-%`],
          );
          return rows.filter((r) => r.killed).length;
        },
        dispose: async () => {
          await dropPostgresTables(admin, prefix);
          await admin.end();
        },
      };
    }
    case 'redis': {
      const prefix = freshRedisPrefix();
      const admin = new Redis(REDIS_URL);
      admin.on('error', () => undefined);
      const setup = new RedisSessionRepository({ client: admin, prefix, logger });
      await setup.migrate();
      return {
        backend,
        target: REDIS_URL,
        prefix,
        open: async () => new RedisSessionRepository({ client: admin, prefix, logger }),
        killConnection: async () => {
          const list = (await admin.call('CLIENT', 'LIST')) as string;
          const ids = list
            .split('\n')
            .filter((l) => l.includes(` name=${prefix}-`))
            .map((l) => /(?:^|\s)id=(\d+)/.exec(l)?.[1])
            .filter((id): id is string => id !== undefined);
          const id = ids[Math.floor(Math.random() * ids.length)];
          if (id === undefined) return 0;
          return Number(await admin.call('CLIENT', 'KILL', 'ID', id));
        },
        dispose: async () => {
          await deleteRedisKeys(admin, prefix);
          await admin.quit();
        },
      };
    }
  }
}
