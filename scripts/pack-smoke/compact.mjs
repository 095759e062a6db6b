// Runs in a fresh project that installed the packed tarball: the in-memory store and the SQLite default via DI.
import 'reflect-metadata';
import { Container } from 'inversify';
import {
  TYPES,
  createSessionCompactionModule,
  Messages,
  SlidingWindowCompactionStrategy,
  TurnCountTrigger,
  EventFilter,
} from 'session-compaction';

for (const options of [{ repository: 'memory' }, { sqlite: { path: './smoke.db' } }]) {
  const container = new Container();
  // inversify 8: load is synchronous; inversify 7: it returns a promise. Awaiting serves both.
  await container.load(createSessionCompactionModule({ ...options, logLevel: 'error' }));
  const service = container.get(TYPES.SessionService);
  const session = await service.create({ userId: 'smoke' });
  for (let i = 1; i <= 6; i++) {
    await service.appendMessage(session.id, Messages.user(`question ${i}`));
    await service.appendMessage(session.id, Messages.assistant(`answer ${i}`));
  }
  const result = await service.compact(
    session.id,
    new TurnCountTrigger(3),
    new SlidingWindowCompactionStrategy({ maxEvents: 4 }),
  );
  const active = await service.getEvents(session.id, EventFilter.active());
  const all = await service.getEvents(session.id);
  if (result.eventsRemoved !== 8 || active.length !== 4 || all.length !== 12) {
    console.error('pack smoke test failed', { options, removed: result.eventsRemoved, active: active.length, all: all.length });
    process.exit(1);
  }
  await container.get(TYPES.SessionRepository).close?.();
  console.log(
    `pack smoke test (${options.repository ?? 'sqlite default'}): archived ${result.eventsRemoved}, active ${active.length}, total ${all.length} — ok`,
  );
}
