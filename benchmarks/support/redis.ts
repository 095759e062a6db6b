import type { Redis } from 'ioredis';

/** Deletes every key of a benchmark run's prefix (`<prefix>:*`); the prefixes the benchmarks make are hex. */
export async function deleteRedisPrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length > 0) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
