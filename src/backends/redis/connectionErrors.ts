import { RepositoryConnectionError } from '../../errors.js';

const SOCKET_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * ioredis's own words for a command that never got an answer (the connection closed under it, it waited
 * through too many reconnects, the offline queue is off), and the server replies that mean "try another
 * moment or another node" (still loading its dataset, a replica after a failover, no reachable master).
 */
const CONNECTION_MESSAGES =
  /Connection is closed|Command timed out|max retries per request|Stream isn't writeable|^LOADING|^READONLY|^MASTERDOWN/i;

/** True when `error` says the connection (not the command) failed. */
export function isRedisConnectionError(error: unknown): boolean {
  if (error instanceof RepositoryConnectionError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && SOCKET_CODES.has(code)) return true;
  return error.name === 'MaxRetriesPerRequestError' || CONNECTION_MESSAGES.test(error.message);
}

/** The documented error for a lost connection; any other error is returned unchanged. */
export function toRedisError(error: unknown, operation: string): unknown {
  if (error instanceof RepositoryConnectionError || !isRedisConnectionError(error)) return error;
  return new RepositoryConnectionError(`Redis connection lost during ${operation}: ${(error as Error).message}`, {
    backend: 'redis',
    operation,
    cause: error,
  });
}
