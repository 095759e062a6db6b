// An OpenAI Agents SDK agent whose session is this library's event log: compaction after each turn, nothing
// deleted. Run: OPENAI_API_KEY=... npx tsx examples/openai-agents.ts
// In your project: import { CompactingSession } from 'session-compaction/openai-agents'.
import { Agent, run, tool } from '@openai/agents';
import { z } from 'zod';
import {
  Bm25Retriever,
  DefaultSessionService,
  EventFilter,
  SqliteSessionRepository,
  TokenCountCompactionStrategy,
  TokenCountTrigger,
} from 'session-compaction';
import { CompactingSession } from 'session-compaction/openai-agents';

const repository = new SqliteSessionRepository({ path: process.env.SESSIONS_DB ?? './sessions.db' });
const sessionService = new DefaultSessionService(repository); // any repository: memory, SQLite, PostgreSQL, Redis
const session = new CompactingSession({
  sessionService,
  sessionId: 'support-chat-42',
  userId: 'alice', // from your auth; another user's session is refused
  compactionTrigger: new TokenCountTrigger({ threshold: 60_000 }),
  compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: 20_000 }),
  contextWindowTokens: 120_000,
  // Archived items that match the latest user message come back as one transient item (never stored).
  recall: { retriever: new Bm25Retriever({ sessionService }), maxTokens: 4_000 },
});

const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => JSON.stringify({ city, celsius: 14, sky: 'cloudy' }),
});
const agent = new Agent({ name: 'Assistant', instructions: 'Be brief.', model: 'gpt-4.1-mini', tools: [getWeather] });

const first = await run(agent, 'What should I wear in Lisbon today?', { session });
console.log(first.finalOutput);
const second = await run(agent, 'And in Porto?', { session }); // the session supplies the history
console.log(second.finalOutput);

const log = await session.service.getEvents(session.sessionId, EventFilter.all());
console.log(`${log.length} items stored, ${log.filter((e) => e.archived).length} archived by compaction`);
await repository.close();
