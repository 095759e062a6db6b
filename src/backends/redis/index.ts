// 'session-compaction/redis': the Redis backend (needs ioredis).
export { RedisSessionRepository, type RedisSessionRepositoryOptions, type RedisClient } from './RedisSessionRepository.js';
export { RedisCompactionLock, type RedisCompactionLockOptions } from './RedisCompactionLock.js';
