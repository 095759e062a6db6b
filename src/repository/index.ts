export { type SessionRepository, type EventSearchOptions, type ScoredEvent } from './SessionRepository.js';
export type {
  ArchivePurgeCriteria,
  ErasedSession,
  EraseSessionOptions,
  EventKindCounts,
  SessionActivity,
  SessionActivityPage,
  SessionLifecycleOperations,
  Tombstone,
} from './lifecycle.js';
export { InMemorySessionRepository } from './InMemorySessionRepository.js';
export { encodeEvent, decodeEvent, escapeLike, type StoredEvent } from './eventCodec.js';
export { SqliteSessionRepository, type SqliteSessionRepositoryOptions } from './SqliteSessionRepository.js';
export { PostgresSessionRepository, type PostgresSessionRepositoryOptions } from './PostgresSessionRepository.js';
export { RedisSessionRepository, type RedisSessionRepositoryOptions } from './RedisSessionRepository.js';
export { SchemaVersionError } from './SchemaVersionError.js';
export type { MigrateOptions, MigrationStep, SchemaStatus } from './schemaMigrations.js';
export type { ListSessionIdsOptions, SessionIdPage } from './SessionRepository.js';
export { instrumentRepository } from './instrumentRepository.js';
