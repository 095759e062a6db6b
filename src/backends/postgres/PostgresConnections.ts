import type pg from 'pg';
import type { Logger } from '../../logging.js';
import { isPostgresConnectionError, toPostgresError } from './connectionErrors.js';

/**
 * The repository's access to a pool, hardened against dropped connections.
 *
 * `pg` reports a connection that dies while idle in the pool, or while checked out between two statements,
 * as an `'error'` event; an EventEmitter without a listener throws it, which ends the host process. So the
 * pool (ours or the caller's) gets a listener for as long as the repository is open, and so does every client
 * from the moment the pool hands it out until it is released. That moment matters: `pg-pool` removes its own
 * listener when it hands a client out, possibly in the middle of parsing that client's socket data, and the
 * server's "terminating connection" message can be the next one parsed — before the borrower's code runs.
 * Failures surface as `RepositoryConnectionError`.
 */
export class PostgresConnections {
  /** The error a checked-out client reported while no query was running, until it is released. */
  private readonly lost = new WeakMap<pg.PoolClient, Error>();
  private readonly onPoolError = (error: Error) =>
    this.logger.warn('an idle PostgreSQL connection failed; the pool replaces it', { error: error.message });
  private readonly guards = new WeakMap<pg.PoolClient, (error: Error) => void>();
  private closing: Promise<void> | undefined;
  private readonly onAcquire = (client: pg.PoolClient) => {
    const guard = (error: Error) => {
      if (!this.lost.has(client)) this.lost.set(client, error);
    };
    this.guards.set(client, guard);
    client.on('error', guard);
  };
  private readonly onRelease = (_error: Error | undefined, client: pg.PoolClient) => {
    const guard = this.guards.get(client);
    if (guard === undefined) return;
    client.off('error', guard);
    this.guards.delete(client);
    this.lost.delete(client);
  };

  constructor(
    readonly pool: pg.Pool,
    private readonly ownsPool: boolean,
    private readonly logger: Logger,
  ) {
    pool.on('error', this.onPoolError);
    pool.on('acquire', this.onAcquire);
    pool.on('release', this.onRelease);
  }

  /**
   * For operations whose repetition changes nothing (reads, upserts, appends keyed by event id): a lost
   * connection is retried once, on a fresh connection since the pool discards the broken one.
   */
  async idempotent<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (!isPostgresConnectionError(error)) throw toPostgresError(error, operation);
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
      // A connection that failed, or whose rollback failed, is in an unknown state: destroyed, never reused.
      client.release(broken ?? this.lost.get(client));
    }
  }

  /**
   * Ends the pool only when the repository created it; a caller's pool keeps running, minus our listener.
   * Idempotent: pg rejects a second `end()`, so every later (or concurrent) call shares the first one's outcome.
   */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
    this.pool.off('error', this.onPoolError);
    this.pool.off('acquire', this.onAcquire);
    this.pool.off('release', this.onRelease);
  }
}
