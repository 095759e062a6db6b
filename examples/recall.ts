// The README's recall quick start: compaction keeps the prompt small, recall brings back what an old part of
// the conversation said when a new question needs it. Offline (BM25), no model call.
// In your project: import { ... } from 'session-compaction'.
import {
  Bm25Retriever,
  ContextAssembler,
  DefaultSessionService,
  InMemorySessionRepository,
  Messages,
  SlidingWindowCompactionStrategy,
  toOpenAIMessages,
} from 'session-compaction';

const sessions = new DefaultSessionService(new InMemorySessionRepository());
const retriever = new Bm25Retriever({ sessionService: sessions });
const assembler = new ContextAssembler({ sessionService: sessions, retriever });

const { id } = await sessions.create({ userId: 'alice' });
const chat: [string, string][] = [
  ['My locker code at the gym is 4711.', 'Noted.'],
  ['I adopted a puppy called Biscuit.', 'Lovely name!'],
  ['Work was busy this week.', 'Take some rest.'],
  ['I started pottery classes.', 'Pottery is relaxing.'],
];
for (const [question, answer] of chat) {
  await sessions.appendMessage(id, Messages.user(question));
  await sessions.appendMessage(id, Messages.assistant(answer));
}
// Keep only the last 2 events in the active window: the locker code is archived (never deleted).
await sessions.compact(id, () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));

// The new question is the query; the prompt is built inside 1,000 tokens, 200 of them kept for the reply.
const question = 'What was my locker code again?';
const context = await assembler.assemble({
  sessionId: id,
  maxTokens: 1000,
  reserveTokens: 200,
  system: [Messages.system('You are a helpful assistant.')],
  pending: [Messages.user(question)],
});

console.log(context.recalled.map((e) => e.text)); // → [ 'My locker code at the gym is 4711.', 'Noted.', … ]
console.log(context.tokens); // → { system, recall, history, total } with total ≤ 800
const messages = toOpenAIMessages(context.messages); // ready for chat.completions.create({ model, messages })
console.log(messages.at(-2)?.content); // the recall block, right before the question
retriever.close();
