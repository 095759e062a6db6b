// Runs in a fresh project that installed the packed tarball and ioredis: a script using the Redis store through
// DI ends by itself once it has called closeSessionCompaction (the open client kept it alive before).
// REDIS_URL (default redis://127.0.0.1:6379); exits 3 when no Redis answers, so the caller can say it skipped.
import 'reflect-metadata';
import { Container } from 'inversify';
import { Redis } from 'ioredis';
import { closeSessionCompaction, createSessionCompactionModule, Messages, TYPES } from 'session-compaction';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const probe = new Redis(url, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
try {
  await probe.connect();
  await probe.ping();
} catch {
  process.exit(3);
} finally {
  probe.disconnect();
}
const container = new Container();
await container.load(
  createSessionCompactionModule({ repository: 'redis', redis: { url, prefix: `pack-smoke-${process.pid}` }, logLevel: 'error' }),
);
const service = container.get(TYPES.SessionService);
const session = await service.create({ userId: 'redis-smoke' });
await service.appendMessage(session.id, Messages.user('hello'));
await service.delete(session.id);
await closeSessionCompaction(container);
console.log('pack smoke test: Redis store through DI, closed — ok');
// No process.exit: the test is that Node ends on its own.
