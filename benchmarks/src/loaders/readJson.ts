import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from 'session-compaction';

/** Reads and parses a JSON file, naming the file in every failure. */
export function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InvalidArgumentError(`cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new InvalidArgumentError(`${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}

export function asRecord(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new InvalidArgumentError(`${what} must be an object`);
  return value as Record<string, unknown>;
}

export function asArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new InvalidArgumentError(`${what} must be an array`);
  return value;
}
