import type { Redis } from 'ioredis';

/** Every key of a benchmark run's prefix (`<prefix>:*`), a SCAN batch at a time; the prefixes the benchmarks make are hex. */
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
