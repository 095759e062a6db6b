/**
 * Every repository backend behind one small interface, for service-level tests that must hold on all of
 * them. Durable backends use a fresh prefix per run and are skipped (or, under CI, fail) when unreachable.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import {
  InMemorySessionRepository,
  PostgresSessionRepository,
  RedisSessionRepository,
  SqliteSessionRepository,
  type SessionRepository,
} from 'session-compaction';
import type {
  AtomicInsertRepository,
  BatchAppendRepository,
  CompactionRecordRepository,
  EnumerableRepository,
  ErasureRepository,
  EventLogStateRepository,
  EventRewritingRepository,
  MetadataUpdatingRepository,
  RedactionScopeRepository,
  RetentionRepository,
} from 'session-compaction/spi';
import { PG_URL, REDIS_URL, requireService } from './services.js';
import { dropPostgresTables, probePostgres } from './postgres.js';
import { deleteRedisKeys, probeRedis } from './redis.js';

/** The capabilities every built-in repository has. */
export type BuiltInRepository = SessionRepository &
  AtomicInsertRepository &
  MetadataUpdatingRepository &
  EventLogStateRepository &
  CompactionRecordRepository &
  BatchAppendRepository &
  EnumerableRepository &
  ErasureRepository &
  EventRewritingRepository &
  RedactionScopeRepository &
  RetentionRepository;

export interface Backend {
  name: string;
  /** In a `before` hook: connects (skipping the suite when the server is unreachable). */
  setup(ctx: Mocha.Context): Promise<void>;
  repository(): BuiltInRepository;
  teardown(): Promise<void>;
}

const freshPrefix = () => `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;

export function allBackends(): Backend[] {
  let memory: InMemorySessionRepository;
  let sqlite: SqliteSessionRepository;
  let pool: pg.Pool | undefined;
  let postgres: PostgresSessionRepository;
  let client: Redis | undefined;
  let redis: RedisSessionRepository;
  const pgPrefix = freshPrefix();
  const redisPrefix = freshPrefix();
  return [
    {
      name: 'memory',
      setup: async () => void (memory = new InMemorySessionRepository()),
      repository: () => memory,
      teardown: async () => {},
    },
    {
      name: 'sqlite',
      setup: async () => void (sqlite = new SqliteSessionRepository({ path: ':memory:' })),
      repository: () => sqlite,
      teardown: async () => sqlite.close(),
    },
    {
      name: 'postgres',
      setup: async (ctx) => {
        await requireService(ctx, 'PostgreSQL', probePostgres);
        pool = new pg.Pool({ connectionString: PG_URL, max: 5 });
        postgres = new PostgresSessionRepository({ pool, prefix: pgPrefix });
      },
      repository: () => postgres,
      teardown: async () => {
        if (pool === undefined) return;
        await dropPostgresTables(pool, pgPrefix);
        await pool.end();
      },
    },
    {
      name: 'redis',
      setup: async (ctx) => {
        await requireService(ctx, 'Redis', probeRedis);
        client = new Redis(REDIS_URL);
        redis = new RedisSessionRepository({ client, prefix: redisPrefix });
      },
      repository: () => redis,
      teardown: async () => {
        if (client === undefined) return;
        await deleteRedisKeys(client, redisPrefix);
        client.disconnect();
      },
    },
  ];
}
