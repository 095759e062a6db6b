import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Lua script run by its SHA1 (EVALSHA), falling back to EVAL when the server does not have it cached yet
 * (first use, restart, SCRIPT FLUSH). Unlike `defineCommand`, it adds nothing to a client the caller owns.
 */
export class RedisScript {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(client: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    // One array, which ioredis flattens: spreading a large batch into the call's arguments overflows the stack.
    const keysAndArgs: string[] = [...keys, ...args.map(String)];
    try {
      return await client.evalsha(this.sha, keys.length, keysAndArgs);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
      return client.eval(this.source, keys.length, keysAndArgs);
    }
  }
}
