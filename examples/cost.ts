// What a conversation costs: prompt-cache-aware compaction and a priced usage record on every turn.
// Run: OPENAI_API_KEY=... npx tsx examples/cost.ts   (any OpenAI-compatible endpoint: OPENAI_BASE_URL)
import OpenAI from 'openai';
import {
  DefaultSessionService,
  InMemorySessionRepository,
  OpenAIChatClient,
  SessionMemory,
  cacheAwareCompaction,
  sessionUsageTotals,
} from 'session-compaction';
import { PROVIDER_PRESETS } from 'session-compaction/spi';

const preset = PROVIDER_PRESETS['openai-gpt-4.1']!;
const sessionService = new DefaultSessionService(new InMemorySessionRepository());
const memory = new SessionMemory({
  sessionService,
  client: new OpenAI(),
  model: preset.model,
  prices: preset.prices,
  // Compact at 8,000 tokens, or from 6,800 once the provider's cache has expired; summaries are appended, so
  // they stay a cached prefix. The profile also sets compactBeforeCall, so the pause before a turn is seen.
  ...cacheAwareCompaction({
    budgetTokens: 8000,
    chatClient: new OpenAIChatClient({ model: 'gpt-4.1-mini' }),
    cacheTtlMs: preset.cache.ttlMs,
  }),
  // The summariser's own list prices (gpt-4.1-mini).
  summarizerPrices: { inputPerMTok: 0.4, cachedInputPerMTok: 0.1, outputPerMTok: 1.6 },
});

for (const question of ['Plan a weekend in Lisbon.', 'Which of those places are free?', 'And on a rainy day?']) {
  const reply = await memory.call({ sessionId: 'trip', messages: [{ role: 'user', content: question }] });
  const u = reply.turnUsage;
  process.stdout.write(
    `${question}\n  ${u.inputTokens} input tokens (${u.cachedInputTokens} cached), ${u.outputTokens} output, ` +
      `$${u.estimatedCost?.toFixed(6)} (of which compaction $${u.estimatedCompactionCost?.toFixed(6)})\n`,
  );
}
const totals = sessionUsageTotals((await sessionService.findById('trip'))!.metadata);
process.stdout.write(
  `session so far: ${totals?.turns} turns, $${totals?.estimatedCost} (${totals?.currency}), ` +
    `of which compactions $${totals?.estimatedCompactionCost}\n`,
);
