import { IllegalStateError } from '../errors.js';
import { SchemaVersionError } from './SchemaVersionError.js';

/** One schema step as `migrate({ dryRun: true })` and `schemaStatus()` describe it. */
export interface MigrationStep {
  version: number;
  name: string;
  /** The SQL (or, on Redis, a description of the key changes) the step runs. */
  statements: readonly string[];
}

export interface MigrateOptions {
  /** Report the versions that would be applied, change nothing. */
  dryRun?: boolean;
}

/** What a durable repository's schema looks like compared with what this library knows. */
export interface SchemaStatus {
  backend: 'sqlite' | 'postgres' | 'redis';
  /** Database file, or table / key prefix on a server. */
  location: string;
  /** Versions recorded in the database, ascending. */
  applied: number[];
  /** Known versions not applied yet, in the order `migrate()` applies them. */
  pending: MigrationStep[];
  /** The highest version this library knows. */
  latest: number;
  /** Recorded versions this library does not know: the database is newer than the code. */
  unknown: number[];
}

/**
 * The known migrations in application order, checked once: versions must be unique positive integers.
 * Lists are append-only but several branches may add versions independently, so the array order is not
 * trusted; a database missing a lower version than one it has (a branch landed later) still gets it.
 */
export function orderedMigrations<M extends { version: number }>(known: readonly M[]): M[] {
  const seen = new Set<number>();
  for (const m of known) {
    if (!Number.isInteger(m.version) || m.version <= 0 || seen.has(m.version)) {
      throw new IllegalStateError(`migration list is invalid: version ${m.version} is not a unique positive integer`);
    }
    seen.add(m.version);
  }
  return [...known].sort((a, b) => a.version - b.version);
}

/**
 * The known migrations not yet applied, lowest first. Throws SchemaVersionError, before anything is changed,
 * when the database records a version this code does not know.
 */
export function pendingMigrations<M extends { version: number }>(
  known: readonly M[],
  applied: Iterable<number>,
  backend: SchemaStatus['backend'],
  location: string,
): M[] {
  const ordered = orderedMigrations(known);
  const done = new Set(applied);
  const unknown = unknownVersions(ordered, done);
  if (unknown.length > 0) throw new SchemaVersionError(backend, location, unknown, latestVersion(ordered));
  return ordered.filter((m) => !done.has(m.version));
}

export function unknownVersions(known: readonly { version: number }[], applied: Iterable<number>): number[] {
  const versions = new Set(known.map((m) => m.version));
  return [...new Set(applied)].filter((v) => !versions.has(v)).sort((a, b) => a - b);
}

export function latestVersion(known: readonly { version: number }[]): number {
  return known.reduce((max, m) => Math.max(max, m.version), 0);
}
