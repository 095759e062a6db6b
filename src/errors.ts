/**
 * Thrown for invalid arguments. Tests and callers match on `message`, so messages are part of the
 * public contract (see API.md) and must not be reworded.
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
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new InvalidArgumentError(`${name} must be greater than 0`);
  }
  return value;
}
