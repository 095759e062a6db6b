// 'session-compaction/sqlite': the embedded backend (needs better-sqlite3).
export { SqliteSessionRepository, type SqliteSessionRepositoryOptions } from '../repository/SqliteSessionRepository.js';
export { SqliteCompactionLock, type SqliteCompactionLockOptions } from '../service/lock/SqliteCompactionLock.js';
