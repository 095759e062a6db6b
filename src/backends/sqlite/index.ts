// 'session-compaction/sqlite': the embedded backend (needs better-sqlite3).
export { SqliteSessionRepository, type SqliteSessionRepositoryOptions } from './SqliteSessionRepository.js';
export { SqliteCompactionLock, type SqliteCompactionLockOptions } from './SqliteCompactionLock.js';
