import type { Redis } from 'ioredis';
import { RepositoryConnectionError } from '../../errors.js';
import type { Logger } from '../../logging.js';
import { isRedisConnectionError, toRedisError } from './connectionErrors.js';

export interface RedisConnectionPolicy {
  /** The longest one repository call waits for Redis, a reconnect gap included. */
  commandTimeoutMs: number;
  /** Fail at once, instead of waiting for the reconnect, when the client is not connected. */
  failFastWhenDisconnected: boolean;
}

/** A timeout already spent the caller's whole budget: it is not retried. */
class RedisTimeout extends RepositoryConnectionError {}

/**
 * The repository's access to an ioredis client, hardened against dropped connections. ioredis reconnects by
 * itself and queues commands issued meanwhile; this bounds how long a call waits for that, gives the client
 * an `'error'` listener for as long as the repository is open (without one, ioredis prints every connection
 * error to the console), and turns connection failures into `RepositoryConnectionError`.
 */
export class RedisConnections {
  private readonly onError = (error: Error) =>
    this.logger.warn('Redis connection error; ioredis reconnects', { error: error.message });
  private closing: Promise<void> | undefined;

  constructor(
    readonly client: Redis,
    private readonly ownsClient: boolean,
    private readonly policy: RedisConnectionPolicy,
    private readonly logger: Logger,
  ) {
    client.on('error', this.onError);
  }

  /** Reads, upserts and appends keyed by event id: a dropped connection is retried once. */
  async idempotent<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await this.bounded(operation, work);
    } catch (error) {
      if (!isRedisConnectionError(error) || error instanceof RedisTimeout) throw toRedisError(error, operation);
      this.logger.warn('Redis connection lost; retrying once', { operation, error: (error as Error).message });
      return this.bounded(operation, work);
    }
  }

  /** Compare-and-set and insert-if-absent: never repeated blindly. */
  once<T>(operation: string, work: () => Promise<T>): Promise<T> {
    return this.bounded(operation, work);
  }

  /** Idempotent: every later (or concurrent) call shares the first one's outcome. */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    if (this.ownsClient) {
      // QUIT needs a connection: while reconnecting it would wait in the offline queue, so drop the socket.
      if (this.client.status !== 'ready') this.client.disconnect();
      else await this.client.quit().catch(() => this.client.disconnect());
    }
    this.client.off('error', this.onError);
  }

  private async bounded<T>(operation: string, work: () => Promise<T>): Promise<T> {
    if (this.policy.failFastWhenDisconnected && this.client.status !== 'ready') {
      throw new RepositoryConnectionError(`Redis is not connected (${this.client.status}) during ${operation}`, {
        backend: 'redis',
        operation,
        cause: new Error(`client status ${this.client.status}`),
      });
    }
    let timer: NodeJS.Timeout | undefined;
    const running = work();
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // The command may still run once Redis is back; its outcome is then unknown, as for any lost connection.
        running.catch(() => undefined);
        const message = `Redis did not answer ${operation} within ${this.policy.commandTimeoutMs} ms`;
        reject(new RedisTimeout(message, { backend: 'redis', operation, cause: new Error(message) }));
      }, this.policy.commandTimeoutMs);
    });
    try {
      return await Promise.race([running, deadline]);
    } catch (error) {
      throw toRedisError(error, operation);
    } finally {
      clearTimeout(timer);
    }
  }
}
