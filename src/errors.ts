/**
 * Thrown for invalid arguments. Tests and callers match on `message`, so messages are part of the
 * public contract (the docs quote them) and must not be reworded.
 */
export class InvalidArgumentError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'InvalidArgumentError';
  }
}

/** Thrown when an operation is not allowed in the current state, e.g. an ownership violation. */
export class IllegalStateError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'IllegalStateError';
  }
}

/**
 * A stored row that cannot be read back: bytes that are not JSON where this library always writes JSON (the
 * metadata or the structured part of an event, a session's metadata), left by a hand edit, a half-finished
 * migration or a damaged file. It names the session and, for an event row, the event, so an operator can
 * repair or remove that one row. An `IllegalStateError`: retrying does not help. Shapes an older release
 * could have written (valid JSON of the wrong shape) are not corruption: they read back repaired.
 */
export class CorruptedRecordError extends IllegalStateError {
  readonly sessionId: string;
  /** The event whose row is corrupted; undefined for the session row itself. */
  readonly eventId: string | undefined;
  /** The stored field that could not be read, e.g. `metadata`. */
  readonly field: string;

  constructor(record: { sessionId: string; eventId?: string; field: string; problem: string }, options?: { cause?: unknown }) {
    const where =
      record.eventId === undefined ? `session ${record.sessionId}` : `event ${record.eventId} of session ${record.sessionId}`;
    super(`Corrupted stored ${where}: ${record.field} ${record.problem}`, options);
    this.name = 'CorruptedRecordError';
    this.sessionId = record.sessionId;
    this.eventId = record.eventId;
    this.field = record.field;
  }
}

/** Which store lost its connection. */
export type RepositoryBackend = 'postgres' | 'redis';

/**
 * A repository lost its connection to the database in the middle of an operation (the server restarted, a
 * failover, a network blip, a killed backend), or could not reach it within the configured time. The
 * operation did not half-apply: a write either committed entirely or not at all, and which one is unknown
 * when the connection dropped while the commit was in flight. Retrying is safe — appends are idempotent by
 * event id and compactions are compare-and-set — and the next call uses a fresh connection. The exception is a
 * metadata update (`updateMetadata` / `updateSessionMetadata`): its `update` function is not idempotent in
 * general (an increment), so a retry after an unknown outcome may apply it twice; re-read the session first.
 */
export class RepositoryConnectionError extends Error {
  /** Always true: the same call may succeed on a fresh connection. */
  readonly retriable = true as const;
  readonly backend: RepositoryBackend;
  /** The repository method that failed, e.g. `appendEvent`. */
  readonly operation: string;

  constructor(message: string, options: { backend: RepositoryBackend; operation: string; cause: unknown }) {
    super(message, { cause: options.cause });
    this.name = 'RepositoryConnectionError';
    this.backend = options.backend;
    this.operation = options.operation;
  }
}

/** Argument checks shared by every constructor; each returns the checked value for fluent use. */
export function requireText(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidArgumentError(`${name} must not be null or empty`);
  }
  return value;
}

export function requireDefined<T>(value: T | null | undefined, name: string): T {
  if (value === null || value === undefined) {
    throw new InvalidArgumentError(`${name} must not be null`);
  }
  return value;
}

export function requirePositiveInt(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    // The contract's message leads, so callers matching it still do; the rest says why a value like "abc" or 2.5
    // (from a configuration file or a command line) was refused, which "greater than 0" alone does not.
    throw new InvalidArgumentError(`${name} must be greater than 0 (got ${describeValue(value)}, not an integer)`);
  }
  if (value <= 0) throw new InvalidArgumentError(`${name} must be greater than 0`);
  return value;
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return value === null ? 'null' : typeof value;
}
