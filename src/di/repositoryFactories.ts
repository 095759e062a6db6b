import { InvalidArgumentError } from '../errors.js';
import type { Logger } from '../logging.js';
import { InMemorySessionRepository } from '../repository/InMemorySessionRepository.js';
import {
  PostgresSessionRepository,
  type PostgresSessionRepositoryOptions,
} from '../backends/postgres/PostgresSessionRepository.js';
import { RedisSessionRepository, type RedisSessionRepositoryOptions } from '../backends/redis/RedisSessionRepository.js';
import type { SessionRepository } from '../repository/SessionRepository.js';
import { SqliteSessionRepository, type SqliteSessionRepositoryOptions } from '../backends/sqlite/SqliteSessionRepository.js';

export type RepositoryKind = 'memory' | 'sqlite' | 'postgres' | 'redis';

/**
 * Each backend's own options (pool or client, prefix, initializeSchema, …); the logger comes from the
 * container. Unset connection settings fall back to the environment: PG_URL, REDIS_URL.
 */
export interface RepositorySettings {
  /** Default path './sessions.db'. */
  sqlite?: Partial<Omit<SqliteSessionRepositoryOptions, 'logger'>>;
  postgres?: Omit<PostgresSessionRepositoryOptions, 'logger'>;
  redis?: Omit<RedisSessionRepositoryOptions, 'logger'>;
  logger?: Logger;
}

type Factory = (settings: RepositorySettings) => SessionRepository;

const factories: Record<RepositoryKind, Factory> = {
  memory: () => new InMemorySessionRepository(),
  sqlite: (s) => new SqliteSessionRepository({ ...s.sqlite, path: s.sqlite?.path ?? './sessions.db', logger: s.logger }),
  postgres: (s) =>
    new PostgresSessionRepository({
      ...s.postgres,
      connectionString: s.postgres?.connectionString ?? process.env.PG_URL,
      logger: s.logger,
    }),
  redis: (s) => new RedisSessionRepository({ ...s.redis, url: s.redis?.url ?? process.env.REDIS_URL, logger: s.logger }),
};

export function createRepository(kind: RepositoryKind, settings: RepositorySettings): SessionRepository {
  const factory = Object.hasOwn(factories, kind) ? factories[kind] : undefined;
  if (factory === undefined) {
    throw new InvalidArgumentError(
      `repository must be one of 'memory', 'sqlite', 'postgres', 'redis' or a SessionRepository instance (got '${String(kind)}')`,
    );
  }
  return factory(settings);
}
