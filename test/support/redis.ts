import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { deleteRedisPrefix } from '../../benchmarks/support/redis.js';
import { REDIS_URL } from './services.js';

/** A prefix no other run uses, so parallel runs on one server never collide. */
export function freshRedisPrefix(): string {
  return `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/** Deletes every key under `prefix` with SCAN (never KEYS, which blocks the server): the benchmarks' helper. */
export async function deleteRedisKeys(client: Redis, prefix: string): Promise<void> {
  await deleteRedisPrefix(client, prefix);
}

export async function probeRedis(): Promise<void> {
  const probe = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await probe.connect();
    await probe.ping();
  } finally {
    probe.disconnect();
  }
}
