// SessionMemory over the Anthropic Messages API, with a tool loop and compaction on SQLite.
// Run: ANTHROPIC_API_KEY=... npx tsx examples/anthropic.ts   (ANTHROPIC_BASE_URL for a compatible endpoint)
// In your project: import { AnthropicSessionMemory } from 'session-compaction/anthropic'.
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import {
  ContextWindowTrigger,
  DefaultSessionService,
  EventFilter,
  SqliteSessionRepository,
  TokenCountCompactionStrategy,
} from 'session-compaction';
import { AnthropicSessionMemory } from 'session-compaction/anthropic';

const repository = new SqliteSessionRepository({ path: process.env.SESSIONS_DB ?? './sessions.db' });
const sessions = new DefaultSessionService(repository);
const memory = new AnthropicSessionMemory({
  sessionService: sessions,
  client: new Anthropic(), // reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL
  model: process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-6',
  maxTokens: 1024,
  contextWindowTokens: 200_000,
  compactionTrigger: new ContextWindowTrigger({ contextWindowTokens: 200_000 }),
  compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: 60_000 }),
});

const tools: Tool[] = [
  {
    name: 'get_weather',
    description: 'Current weather for a city',
    input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
];
const runTool = (name: string, input: unknown) =>
  name === 'get_weather'
    ? JSON.stringify({ city: (input as { city: string }).city, celsius: 14, sky: 'cloudy' })
    : 'unknown tool';

const sessionId = 'weather-demo';
let messages: MessageParam[] = [{ role: 'user', content: 'What should I wear in Lisbon today?' }];
// The loop sends only the NEW messages of each step; the session supplies the history.
for (let step = 0; step < 5; step++) {
  const response = await memory.call({ sessionId, userId: 'alice', system: 'Be brief.', tools, messages });
  const uses = response.message.content.filter((b) => b.type === 'tool_use');
  if (uses.length === 0) {
    console.log(response.message.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
    break;
  }
  messages = [
    {
      role: 'user',
      content: uses.map((u) => ({ type: 'tool_result' as const, tool_use_id: u.id, content: runTool(u.name, u.input) })),
    },
  ];
}

const log = await sessions.getEvents(sessionId, EventFilter.all());
console.log(`${log.length} events stored (${log.filter((e) => e.archived).length} archived)`);
await repository.close();
