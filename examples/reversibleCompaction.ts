// Reversible compaction, explicit ranges and forks (docs/reversible-compaction.md).
// In your project: import { ... } from 'session-compaction'.
import {
  DefaultSessionService,
  EventFilter,
  ExtractiveSummarizer,
  InMemorySessionRepository,
  Messages,
  RecursiveSummarizationCompactionStrategy,
} from 'session-compaction';

const sessions = new DefaultSessionService(new InMemorySessionRepository());
const { id } = await sessions.create({ userId: 'alice' });
for (let i = 1; i <= 8; i++) {
  await sessions.appendMessage(id, Messages.user(`Question ${i}?`));
  await sessions.appendMessage(id, Messages.assistant(`Answer ${i}.`));
}
const window = async (sessionId: string) => (await sessions.getEvents(sessionId, EventFilter.active())).map((e) => e.text);
const before = await window(id);

// A summariser without a model, so the example runs offline; any ChatClient works the same way.
const summarize = new RecursiveSummarizationCompactionStrategy({ chatClient: new ExtractiveSummarizer(), maxEventsToKeep: 4 });

// 1. Compact only turns 2–4: the rest of the window is untouched. Inside the range the strategy keeps its own
//    rules (here: the range's last 4 events stay), so only turn 2 is summarised.
const events = await sessions.getEvents(id, EventFilter.active());
await sessions.compact(id, () => true, summarize, { range: { fromEventId: events[2]!.id, toEventId: events[7]!.id } });
console.log('after the range compaction:', await window(id));

// 2. Every compaction is recorded; the latest one can be reverted.
const [latest] = await sessions.listCompactions(id, { userId: 'alice' });
console.log(`compaction ${latest!.id}: archived ${latest!.archivedEventIds.length}, added ${latest!.addedEventIds.length}`);
await sessions.appendMessage(id, Messages.user('A question asked after the compaction'));
await sessions.revertCompaction(id, latest!.id, { userId: 'alice' });
const restored = await window(id);
console.log(
  'restored exactly:',
  JSON.stringify(restored.slice(0, before.length)) === JSON.stringify(before),
  '→',
  restored.at(-1),
);

// 3. Fork the conversation at question 3: a new session, the source untouched.
const fork = await sessions.forkSession(id, { atEventId: events[4]!.id, userId: 'alice' });
console.log('fork:', fork.id, fork.metadata.forkedFrom, await window(fork.id));
