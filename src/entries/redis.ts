// 'session-compaction/redis': the Redis backend (needs ioredis).
export {
  RedisSessionRepository,
  type RedisSessionRepositoryOptions,
  type RedisClient,
} from '../repository/RedisSessionRepository.js';
export { RedisCompactionLock, type RedisCompactionLockOptions } from '../service/lock/RedisCompactionLock.js';
