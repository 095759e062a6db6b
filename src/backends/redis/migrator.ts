import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { IllegalStateError } from '../../errors.js';
import type { Logger } from '../../logging.js';
import { latestVersion, pendingMigrations, unknownVersions, type SchemaStatus } from '../../repository/schemaMigrations.js';
import { RedisScript } from './RedisScript.js';
import { REDIS_MIGRATIONS, type RedisMigration } from './schema.js';

const LOCK_TTL_MS = 60_000;
const LOCK_POLL_MS = 50;
const RELEASE = new RedisScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`);

/** The hash recording applied versions (version -> JSON { name, appliedAt }). */
export function migrationsKey(prefix: string): string {
  return `${prefix}:migrations`;
}

async function appliedVersions(client: Redis, prefix: string): Promise<number[]> {
  return (await client.hkeys(migrationsKey(prefix))).map(Number).sort((a, b) => a - b);
}

export async function redisSchemaStatus(
  client: Redis,
  prefix: string,
  migrations: readonly RedisMigration[] = REDIS_MIGRATIONS,
): Promise<SchemaStatus> {
  const applied = await appliedVersions(client, prefix);
  const unknown = unknownVersions(migrations, applied);
  const pending = unknown.length > 0 ? [] : pendingMigrations(migrations, applied, 'redis', location(prefix));
  return {
    backend: 'redis',
    location: location(prefix),
    applied,
    pending: pending.map((m) => ({ version: m.version, name: m.name, statements: m.statements })),
    latest: latestVersion(migrations),
    unknown,
  };
}

/** Throws SchemaVersionError when the keys were written by newer code; returns the pending versions. */
export async function redisPendingVersions(
  client: Redis,
  prefix: string,
  migrations: readonly RedisMigration[] = REDIS_MIGRATIONS,
): Promise<number[]> {
  const applied = await appliedVersions(client, prefix);
  return pendingMigrations(migrations, applied, 'redis', location(prefix)).map((m) => m.version);
}

/**
 * Applies every pending step, lowest version first, under a lock key, so app instances starting together run
 * each step once. Each version is recorded right after its step: Redis has no multi-key rollback, so the steps
 * themselves are idempotent and an interrupted run resumes where it stopped.
 */
export async function migrateRedis(
  client: Redis,
  prefix: string,
  logger: Logger,
  migrations: readonly RedisMigration[] = REDIS_MIGRATIONS,
): Promise<number[]> {
  const lockKey = `${migrationsKey(prefix)}:lock`;
  const token = randomUUID();
  const deadline = Date.now() + LOCK_TTL_MS;
  while ((await client.set(lockKey, token, 'PX', LOCK_TTL_MS, 'NX')) !== 'OK') {
    if (Date.now() > deadline) throw new IllegalStateError(`Redis schema lock ${lockKey} is held by another migration`);
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
  try {
    const pending = pendingMigrations(migrations, await appliedVersions(client, prefix), 'redis', location(prefix));
    for (const m of pending) {
      await m.run?.({ client, prefix });
      await client.hset(migrationsKey(prefix), String(m.version), JSON.stringify({ name: m.name, appliedAt: Date.now() }));
    }
    const ran = pending.map((m) => m.version);
    if (ran.length > 0) logger.info('Redis schema migrated', { prefix, versions: ran });
    return ran;
  } finally {
    await RELEASE.run(client, [lockKey], [token]);
  }
}

function location(prefix: string): string {
  return `prefix '${prefix}'`;
}
