// 'session-compaction/postgres': the PostgreSQL backend (needs pg).
export {
  PostgresSessionRepository,
  type PostgresSessionRepositoryOptions,
  type PostgresPool,
} from './PostgresSessionRepository.js';
export { PostgresCompactionLock, type PostgresCompactionLockOptions } from './PostgresCompactionLock.js';
