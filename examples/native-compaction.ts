// Provider-native compaction: Anthropic compacts the conversation itself (a signed `compaction` block sent back
// verbatim on later turns); the library's summariser writes the text any other provider reads, and compacts
// alone when Anthropic's compaction fails. See docs/native-compaction.md.
// Run: ANTHROPIC_API_KEY=... npx tsx examples/native-compaction.ts   (ANTHROPIC_BASE_URL for a compatible endpoint)
import Anthropic from '@anthropic-ai/sdk';
import {
  DefaultSessionService,
  EventFilter,
  ExtractiveSummarizer,
  NativeCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  SqliteSessionRepository,
  TurnCountTrigger,
} from 'session-compaction';
import { AnthropicCompactor, AnthropicSessionMemory } from 'session-compaction/anthropic';
import { METADATA_NATIVE_COMPACTION } from 'session-compaction/spi';

const model = process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-6';
const client = new Anthropic(); // reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL
const sessions = new DefaultSessionService(new SqliteSessionRepository({ path: process.env.SESSIONS_DB ?? './sessions.db' }));

const memory = new AnthropicSessionMemory({
  sessionService: sessions,
  client,
  model,
  maxTokens: 1024,
  // Every 4 turns, for the demo; in production a ContextWindowTrigger or TokenCountTrigger.
  compactionTrigger: new TurnCountTrigger(4),
  compactionStrategy: new NativeCompactionStrategy({
    compactor: new AnthropicCompactor(client, { model }),
    // The range to compact, the portable text and the fallback; an offline summariser keeps the demo to one key.
    fallback: new RecursiveSummarizationCompactionStrategy({ chatClient: new ExtractiveSummarizer(), maxEventsToKeep: 4 }),
  }),
});

const sessionId = 'native-compaction-demo';
for (const question of [
  'My name is Ada and I am planning a trip to Lisbon in May.',
  'What should I pack?',
  'Which neighbourhood should I stay in?',
  'Any day trips you recommend?',
  'Remind me: what is my name and where am I going?',
]) {
  const reply = await memory.call({ sessionId, messages: [{ role: 'user', content: question }] });
  const text = reply.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
  console.log(`> ${question}\n${text}\n`);
}

const native = (await sessions.getEvents(sessionId, EventFilter.active())).find(
  (e) => e.messageType === 'assistant' && e.metadata[METADATA_NATIVE_COMPACTION] !== undefined,
);
console.log(native === undefined ? 'no native compaction yet' : `native compaction stored; other providers read: ${native.text}`);
