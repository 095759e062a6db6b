import { InvalidArgumentError } from '../errors.js';
import type { Logger } from '../logging.js';
import { InMemorySessionRepository } from '../repository/InMemorySessionRepository.js';
import { PostgresSessionRepository } from '../repository/PostgresSessionRepository.js';
import { RedisSessionRepository } from '../repository/RedisSessionRepository.js';
import type { SessionRepository } from '../repository/SessionRepository.js';
import { SqliteSessionRepository } from '../repository/SqliteSessionRepository.js';

export type RepositoryKind = 'memory' | 'sqlite' | 'postgres' | 'redis';

/** Connection settings per backend; unset values fall back to the environment (PG_URL, REDIS_URL). */
export interface RepositorySettings {
  sqlite?: { path?: string };
  postgres?: { connectionString?: string; prefix?: string };
  redis?: { url?: string; prefix?: string };
  logger?: Logger;
}

type Factory = (settings: RepositorySettings) => SessionRepository;

const factories: Partial<Record<RepositoryKind, Factory>> = {
  memory: () => new InMemorySessionRepository(),
  sqlite: (s) => new SqliteSessionRepository({ path: s.sqlite?.path ?? './sessions.db', logger: s.logger }),
  postgres: (s) =>
    new PostgresSessionRepository({
      ...s.postgres,
      connectionString: s.postgres?.connectionString ?? process.env.PG_URL,
      logger: s.logger,
    }),
  redis: (s) => new RedisSessionRepository({ ...s.redis, url: s.redis?.url ?? process.env.REDIS_URL, logger: s.logger }),
};

/** Durable backends register themselves here, so the DI module needs no knowledge of their drivers. */
export function registerRepositoryFactory(kind: RepositoryKind, factory: Factory): void {
  factories[kind] = factory;
}

export function createRepository(kind: RepositoryKind, settings: RepositorySettings): SessionRepository {
  const factory = factories[kind];
  if (factory === undefined) {
    throw new InvalidArgumentError(
      `repository must be one of 'memory', 'sqlite', 'postgres', 'redis' or a SessionRepository instance (got '${String(kind)}')`,
    );
  }
  return factory(settings);
}
