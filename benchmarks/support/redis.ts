import type { Redis } from 'ioredis';

/**
 * Every key of a run's prefix (`<prefix>:*`), a SCAN batch at a time. The prefix goes into a MATCH pattern as is: the
 * prefixes the benchmarks and the tests make (letters, digits, `_`) hold no glob character.
 */
export async function* redisKeys(client: Redis, prefix: string): AsyncGenerator<string[]> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length > 0) yield keys;
    cursor = next;
  } while (cursor !== '0');
}

/** Deletes every key of a benchmark run's prefix (`<prefix>:*`). */
export async function deleteRedisPrefix(client: Redis, prefix: string): Promise<void> {
  for await (const keys of redisKeys(client, prefix)) await client.unlink(...keys);
}
