// The README's quick start. In your project: import { ... } from 'session-compaction'.
import 'reflect-metadata';
import { Container } from 'inversify';
import {
  closeSessionCompaction,
  createSessionCompactionModule,
  EventFilter,
  Messages,
  SlidingWindowCompactionStrategy,
  TurnCountTrigger,
  TYPES,
  type SessionService,
} from 'session-compaction';

const container = new Container();
await container.load(createSessionCompactionModule({ repository: 'memory' }));
const sessions = container.get<SessionService>(TYPES.SessionService);

const session = await sessions.create({ userId: 'alice' });
// Pinned: no strategy archives it, so every compacted window still starts with the instructions.
await sessions.appendMessage(session.id, Messages.system('You are a helpful assistant.'), { pinned: true });
for (let i = 1; i <= 8; i++) {
  await sessions.appendMessage(session.id, Messages.user(`Question ${i}?`));
  await sessions.appendMessage(session.id, Messages.assistant(`Answer ${i}.`));
}

// More than 5 turns? Keep the last 6 events, cut at a turn boundary; older events are archived, not deleted.
const result = await sessions.compact(session.id, new TurnCountTrigger(5), new SlidingWindowCompactionStrategy({ maxEvents: 6 }));

const active = await sessions.getEvents(session.id, EventFilter.active()); // what you send to the model
const all = await sessions.getEvents(session.id); // the full history, archived events included
console.log(`archived ${result.eventsRemoved}, active ${active.length}, total ${all.length}`);
console.log(`first active: ${active[0]?.text}`);
// → archived 10, active 7, total 17
// → first active: You are a helpful assistant.

await closeSessionCompaction(container); // closes the store the module opened (a file, a pool, a Redis client)
