import { hasMethods } from './hasMethods.js';
import type { MigrateOptions, SchemaStatus } from './schemaMigrations.js';

/**
 * A repository with a versioned schema (SQLite, PostgreSQL and Redis): `session-compaction migrate` applies
 * and reports its versions.
 */
export interface MigratableRepository {
  /** Applies every pending version, lowest first; returns them (with `dryRun`, the ones it would apply). */
  migrate(options?: MigrateOptions): Promise<number[]>;
  schemaStatus(): Promise<SchemaStatus>;
}

/** Whether `repository` is a MigratableRepository: it has every one of its methods. */
export function isMigratableRepository<R>(repository: R): repository is R & MigratableRepository {
  return hasMethods(repository, ['migrate', 'schemaStatus']);
}
