import { InvalidArgumentError, RepositoryConnectionError } from '../../errors.js';

/** Socket-level failures: the connection is gone, the statement's outcome may be unknown. */
const SOCKET_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs that mean "this connection is finished, another one may work": class 08 (connection exception),
 * 57P01 admin_shutdown (`pg_terminate_backend`, a fast shutdown), 57P02 crash_shutdown, 57P03
 * cannot_connect_now (the server is starting or in recovery).
 */
const isConnectionSqlState = (code: string) => code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03';

/** What `pg` and `pg-pool` throw, without an error code, when a connection dies or cannot be made. */
const DRIVER_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|encountered a connection error|Client was closed|is not queryable/i;

/** True when `error` says the connection (not the statement) failed. */
export function isPostgresConnectionError(error: unknown): boolean {
  if (error instanceof RepositoryConnectionError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || isConnectionSqlState(code))) return true;
  return DRIVER_MESSAGES.test(error.message);
}

/**
 * 22021 character_not_in_repertoire, 22P05 untranslatable_character: a string argument holding NUL, which
 * PostgreSQL cannot take. Stored strings are checked long before; this is an id or search term passed
 * straight to the repository, and it is the caller's input that is wrong, not the database.
 */
const isUnstorableString = (error: unknown) =>
  error instanceof Error && ['22021', '22P05'].includes(String((error as { code?: unknown }).code));

/** The documented error for a lost connection (or a refused string argument); any other error is returned unchanged. */
export function toPostgresError(error: unknown, operation: string): unknown {
  if (isUnstorableString(error)) {
    return new InvalidArgumentError(`${operation}: an argument holds a character PostgreSQL cannot take (NUL)`, { cause: error });
  }
  if (error instanceof RepositoryConnectionError || !isPostgresConnectionError(error)) return error;
  return new RepositoryConnectionError(`PostgreSQL connection lost during ${operation}: ${(error as Error).message}`, {
    backend: 'postgres',
    operation,
    cause: error,
  });
}
