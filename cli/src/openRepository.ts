import { existsSync } from 'node:fs';
import { InvalidArgumentError, type Logger, type SessionRepository } from 'session-compaction';

export type Backend = 'sqlite' | 'postgres' | 'redis' | 'memory';

export interface RepositoryLocation {
  backend: Backend;
  /** The file path (SQLite) or the connection URL without the `prefix` parameter. */
  target: string;
  prefix?: string;
}

export interface OpenOptions {
  /** Overrides a `prefix` parameter in the URL. */
  prefix?: string;
  /** Migrate on first use (copy and import targets); admin reads leave the schema alone. Default false. */
  initializeSchema?: boolean;
  /**
   * Open a SQLite file that does not exist yet (migrate); default false, so that a command asked to read or
   * change a store never creates one. `initializeSchema` implies it.
   */
  createIfMissing?: boolean;
  /** SQLite only: 'NORMAL' for bulk writes that are verified afterwards anyway. */
  synchronous?: 'FULL' | 'NORMAL';
  /** SQLite only: overwrite what lifecycle commands erase (see SqliteSessionRepositoryOptions.secureDelete). */
  secureDelete?: boolean;
  logger: Logger;
}

/**
 * Reads a repository URL: `sqlite:<path>` (also `sqlite://<path>`, `sqlite::memory:`, or a bare path ending in
 * .db / .sqlite / .sqlite3), `postgres://…` / `postgresql://…`, `redis://…` / `rediss://…`, and `memory:`
 * (an empty in-process store, for trying commands out). A `prefix` query parameter selects the table or key
 * prefix and is not passed on to the driver.
 */
export function parseRepositoryUrl(url: string): RepositoryLocation {
  if (typeof url !== 'string' || url.trim() === '') throw new InvalidArgumentError('--url must not be empty');
  const trimmed = url.trim();
  if (trimmed === 'memory:') return { backend: 'memory', target: '' };
  if (/^(postgres|postgresql|redis|rediss):\/\//i.test(trimmed)) {
    const parsed = new URL(trimmed);
    const prefix = parsed.searchParams.get('prefix') ?? undefined;
    parsed.searchParams.delete('prefix');
    const backend = parsed.protocol.startsWith('postgres') ? 'postgres' : 'redis';
    return { backend, target: parsed.toString(), ...(prefix !== undefined ? { prefix } : {}) };
  }
  let path: string;
  if (/^sqlite:/i.test(trimmed)) path = trimmed.slice('sqlite:'.length).replace(/^\/\//, '');
  else if (/\.(db|sqlite|sqlite3)(\?.*)?$/i.test(trimmed)) path = trimmed;
  else {
    throw new InvalidArgumentError(`unsupported --url '${trimmed}': use sqlite:<path>, postgres://…, redis://… or memory:`);
  }
  const query = path.lastIndexOf('?');
  let prefix: string | undefined;
  if (query >= 0) {
    prefix = new URLSearchParams(path.slice(query + 1)).get('prefix') ?? undefined;
    path = path.slice(0, query);
  }
  if (path === '') throw new InvalidArgumentError(`--url '${trimmed}' names no SQLite file`);
  return { backend: 'sqlite', target: path, ...(prefix !== undefined ? { prefix } : {}) };
}

/** A server URL with its password, if any, masked. */
function masked(url: string): string {
  const u = new URL(url);
  if (u.password !== '') u.password = '***';
  return u.toString();
}

/** A URL for messages and reports: the password, if any, is masked. */
export function describeLocation(location: RepositoryLocation): string {
  const where = location.backend === 'postgres' || location.backend === 'redis' ? masked(location.target) : location.target;
  const prefix = location.prefix !== undefined ? ` (prefix ${location.prefix})` : '';
  return `${location.backend} ${where}${prefix}`;
}

/** The command that creates or migrates the store at `location`, ready to paste (a password is masked). */
export function migrateCommandFor(location: RepositoryLocation): string {
  const url =
    location.backend === 'sqlite'
      ? `sqlite:${location.target}`
      : location.backend === 'memory'
        ? 'memory:'
        : masked(location.target);
  const prefix = location.prefix !== undefined ? ` --prefix ${location.prefix}` : '';
  return `session-compaction migrate --url ${url}${prefix}`;
}

/** Opens the repository a URL names; the backend's module (and driver) is loaded only when used. */
export async function openRepository(
  url: string,
  options: OpenOptions,
): Promise<{ repository: SessionRepository; location: RepositoryLocation }> {
  const location = parseRepositoryUrl(url);
  const prefix = options.prefix ?? location.prefix;
  const initializeSchema = options.initializeSchema ?? false;
  const common = { initializeSchema, logger: options.logger, ...(prefix !== undefined ? { prefix } : {}) };
  let repository: SessionRepository;
  switch (location.backend) {
    case 'memory': {
      const { InMemorySessionRepository } = await import('session-compaction');
      repository = new InMemorySessionRepository();
      break;
    }
    case 'sqlite': {
      const creates = initializeSchema || options.createIfMissing === true;
      if (!creates && location.target !== ':memory:' && !existsSync(location.target)) {
        throw new InvalidArgumentError(
          `no SQLite store at ${location.target} (nothing was created): check the path, or create a store there with ` +
            `\`${migrateCommandFor({ ...location, ...(prefix !== undefined ? { prefix } : {}) })}\``,
        );
      }
      const { SqliteSessionRepository } = await import('session-compaction/sqlite');
      repository = new SqliteSessionRepository({
        path: location.target,
        ...common,
        ...(options.synchronous !== undefined ? { synchronous: options.synchronous } : {}),
        ...(options.secureDelete === true ? { secureDelete: true } : {}),
      });
      break;
    }
    case 'postgres': {
      const { PostgresSessionRepository } = await import('session-compaction/postgres');
      repository = new PostgresSessionRepository({ connectionString: location.target, ...common });
      break;
    }
    case 'redis': {
      const { RedisSessionRepository } = await import('session-compaction/redis');
      repository = new RedisSessionRepository({ url: location.target, ...common });
      break;
    }
  }
  return { repository, location: prefix !== undefined ? { ...location, prefix } : location };
}
