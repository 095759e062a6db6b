// LangChain.js with a persistent, compacting chat history: RunnableWithMessageHistory over
// CompactingChatMessageHistory on SQLite. Run: OPENAI_API_KEY=... npx tsx examples/langchain.ts
// In your project: import { CompactingChatMessageHistory } from 'session-compaction/langchain'.
import { ChatPromptTemplate, MessagesPlaceholder } from '@langchain/core/prompts';
import { RunnableWithMessageHistory } from '@langchain/core/runnables';
import { ChatOpenAI } from '@langchain/openai';
import {
  Bm25Retriever,
  DefaultSessionService,
  SqliteSessionRepository,
  TurnCountTrigger,
  TurnWindowCompactionStrategy,
} from 'session-compaction';
import { CompactingChatMessageHistory } from 'session-compaction/langchain';

const repository = new SqliteSessionRepository({ path: process.env.SESSIONS_DB ?? './sessions.db' });
const sessions = new DefaultSessionService(repository);
// Recall: archived turns that match the latest question come back as one quoted message (never stored).
const retriever = new Bm25Retriever({ sessionService: sessions });

const prompt = ChatPromptTemplate.fromMessages([
  ['system', 'You are a concise travel assistant.'],
  new MessagesPlaceholder('history'),
  ['human', '{question}'],
]);
const chain = new RunnableWithMessageHistory({
  runnable: prompt.pipe(new ChatOpenAI({ model: 'gpt-4o-mini' })),
  inputMessagesKey: 'question',
  historyMessagesKey: 'history',
  // Compaction on write: past 20 turns keep the last 10; older turns are archived, never deleted.
  getMessageHistory: (sessionId) =>
    new CompactingChatMessageHistory({
      sessionService: sessions,
      sessionId,
      userId: 'alice', // from your auth
      compactionTrigger: new TurnCountTrigger(20),
      compactionStrategy: new TurnWindowCompactionStrategy({ maxTurns: 10 }),
      recall: { retriever, maxTokens: 1_500 },
    }),
});

const config = { configurable: { sessionId: 'lisbon-trip' } };
console.log((await chain.invoke({ question: 'Plan a weekend in Lisbon.' }, config)).content);
console.log((await chain.invoke({ question: 'Which day has the best weather?' }, config)).content);

const everything = await new CompactingChatMessageHistory({
  sessionService: sessions,
  sessionId: 'lisbon-trip',
}).getAllMessages();
console.log(`${everything.length} messages in the log`);
await repository.close();
