import type pg from 'pg';
import type { Logger } from '../../logging.js';
import { isPostgresConnectionError, toPostgresError } from './connectionErrors.js';

/**
 * The repository's access to a pool, hardened against dropped connections.
 *
 * `pg` reports a connection that dies while idle in the pool, or while checked out between two statements,
 * as an `'error'` event; an EventEmitter without a listener throws it, which ends the host process. So the
 * pool (ours or the caller's) gets a listener for as long as the repository is open, and every checked-out
 * client gets one for as long as it is checked out. Failures surface as `RepositoryConnectionError`.
 */
export class PostgresConnections {
  private readonly onPoolError = (error: Error) =>
    this.logger.warn('an idle PostgreSQL connection failed; the pool replaces it', { error: error.message });

  constructor(
    readonly pool: pg.Pool,
    private readonly ownsPool: boolean,
    private readonly logger: Logger,
  ) {
    pool.on('error', this.onPoolError);
  }

  /**
   * For operations whose repetition changes nothing (reads, upserts, appends keyed by event id): a lost
   * connection is retried once, on a fresh connection since the pool discards the broken one.
   */
  async idempotent<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (!isPostgresConnectionError(error)) throw error;
      this.logger.warn('PostgreSQL connection lost; retrying once on a fresh connection', {
        operation,
        error: (error as Error).message,
      });
      try {
        return await work();
      } catch (retryError) {
        throw toPostgresError(retryError, operation);
      }
    }
  }

  /** For operations that must not be repeated blindly (compare-and-set, insert-if-absent). */
  async once<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw toPostgresError(error, operation);
    }
  }

  /**
   * BEGIN … COMMIT on one checked-out client. Whatever fails (a statement, the connection), the server
   * rolls the transaction back: a connection that dies mid-transaction leaves nothing half-applied.
   */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let lost: Error | undefined;
    const onClientError = (error: Error) => {
      lost ??= error;
    };
    client.on('error', onClientError);
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        broken = rollbackError as Error;
      }
      throw error;
    } finally {
      client.off('error', onClientError);
      // A connection that failed, or whose rollback failed, is in an unknown state: destroyed, never reused.
      client.release(broken ?? lost);
    }
  }

  /** Ends the pool only when the repository created it; a caller's pool keeps running, minus our listener. */
  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
    this.pool.off('error', this.onPoolError);
  }
}
