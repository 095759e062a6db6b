import { IllegalStateError } from '../errors.js';

/**
 * A database whose schema was written by a newer version of this library: it records migrations this code
 * does not know, so reading or writing it could lose data. Upgrade the library (or point it at another
 * prefix); the database is left untouched.
 */
export class SchemaVersionError extends IllegalStateError {
  /** 'sqlite' | 'postgres' | 'redis'. */
  readonly backend: string;
  /** The database file, or the table / key prefix on a server. */
  readonly location: string;
  /** Versions recorded in the database that this library does not know. */
  readonly unknownVersions: readonly number[];
  /** The highest version this library knows. */
  readonly supportedVersion: number;

  constructor(backend: string, location: string, unknownVersions: readonly number[], supportedVersion: number) {
    const found = Math.max(...unknownVersions);
    super(
      `${backend} schema at ${location} is version ${found}, newer than this version of session-compaction supports ` +
        `(${supportedVersion}; unknown migrations: ${unknownVersions.join(', ')}). Upgrade session-compaction; the database was not changed.`,
    );
    this.name = 'SchemaVersionError';
    this.backend = backend;
    this.location = location;
    this.unknownVersions = Object.freeze([...unknownVersions]);
    this.supportedVersion = supportedVersion;
  }
}
