// 'session-compaction/postgres': the PostgreSQL backend (needs pg).
export {
  PostgresSessionRepository,
  type PostgresSessionRepositoryOptions,
  type PostgresPool,
} from '../repository/PostgresSessionRepository.js';
export { PostgresCompactionLock, type PostgresCompactionLockOptions } from '../service/lock/PostgresCompactionLock.js';
