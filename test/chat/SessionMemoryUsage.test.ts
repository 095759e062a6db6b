import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  CacheAwareTrigger,
  DefaultSessionService,
  OpenAIChatClient,
  RecursiveSummarizationCompactionStrategy,
  SessionMemory,
  SlidingWindowCompactionStrategy,
  TurnCountTrigger,
} from 'session-compaction';
import { PROVIDER_PRESETS, METADATA_USAGE, type SessionUsageTotals } from 'session-compaction/spi';
import { allBackends } from '../support/backends.js';
import { CHAT_MODEL, harness, silent, type Harness } from './support/harness.js';

const user = (text: string) => ({ role: 'user' as const, content: text });
const GPT41 = PROVIDER_PRESETS['openai-gpt-4.1']!.prices;
const SUMMARY_PRICES = { inputPerMTok: 0.15, cachedInputPerMTok: 0.075, outputPerMTok: 0.6 };

describe('SessionMemory usage and cost accounting', function () {
  let h: Harness;
  beforeEach(async function () {
    h = await harness();
  });
  afterEach(async function () {
    await h.close();
  });

  const totals = async (id: string) => (await h.repository.findById(id))!.metadata[METADATA_USAGE] as SessionUsageTotals;

  it('reports the cached tokens the provider returns in prompt_tokens_details', async function () {
    h.server.enqueue({ content: 'hi', usage: { prompt_tokens: 2000, completion_tokens: 10, cached_tokens: 1920 } });
    const response = await h.memory.call({ sessionId: 's1', messages: [user('hello')] });
    expect(response.turnUsage).to.include({ inputTokens: 2000, cachedInputTokens: 1920, cacheWriteTokens: 0, outputTokens: 10 });
    expect(response.turnUsage.estimatedCost).to.equal(undefined);
    expect(await totals('s1')).to.include({ turns: 1, inputTokens: 2000, cachedInputTokens: 1920, outputTokens: 10 });
  });

  it('reports the cached tokens of a streamed turn from its final usage chunk', async function () {
    h.server.enqueue({ content: 'streamed', usage: { prompt_tokens: 1500, completion_tokens: 4, cached_tokens: 1024 } });
    let done;
    for await (const event of h.memory.stream({ sessionId: 's2', messages: [user('hello')] }))
      if (event.type === 'done') done = event;
    expect(done!.response.turnUsage).to.include({ inputTokens: 1500, cachedInputTokens: 1024, outputTokens: 4 });
  });

  it('accumulates an exact cost in session metadata over a scripted conversation with a summarised compaction', async function () {
    const summariser = new OpenAIChatClient({
      model: 'summary-model',
      baseURL: h.server.url,
      apiKey: 'k',
      maxRetries: 0,
      logger: silent,
    });
    // No metadataStore: the totals go through the service's own updateMetadata.
    const memory = h.memoryWith({
      prices: GPT41,
      summarizerPrices: SUMMARY_PRICES,
      compactionTrigger: new TurnCountTrigger(2),
      compactionStrategy: new RecursiveSummarizationCompactionStrategy({
        chatClient: summariser,
        maxEventsToKeep: 2,
        overlapSize: 1,
        logger: silent,
      }),
    });
    h.server.enqueue(
      { content: 'a1', usage: { prompt_tokens: 1200, completion_tokens: 100 } },
      { content: 'a2', usage: { prompt_tokens: 1500, completion_tokens: 80, cached_tokens: 1152 } },
      { content: 'a3', usage: { prompt_tokens: 1800, completion_tokens: 60, cached_tokens: 1408 } },
      { content: 'the summary', usage: { prompt_tokens: 900, completion_tokens: 50 } },
    );
    const costs: (number | undefined)[] = [];
    const compactionCosts: (number | undefined)[] = [];
    let compactionUsage;
    for (const text of ['q1', 'q2', 'q3']) {
      const response = await memory.call({ sessionId: 's3', messages: [user(text)] });
      costs.push(response.turnUsage.estimatedCost);
      compactionCosts.push(response.turnUsage.estimatedCompactionCost);
      compactionUsage ??= response.compaction?.usage;
    }
    // Turn 1: 1,200 × $2 + 100 × $8 = $0.0032. Turn 2: 348 × $2 + 1,152 × $0.50 + 80 × $8 = $0.001912.
    // Turn 3: 392 × $2 + 1,408 × $0.50 + 60 × $8 = $0.001968, plus the summary 900 × $0.15 + 50 × $0.60 = $0.000165.
    expect(costs).to.deep.equal([0.0032, 0.001912, 0.002133]);
    // The summary's share, apart from the turn's own call.
    expect(compactionCosts).to.deep.equal([0, 0, 0.000165]);
    expect(compactionUsage).to.include({ summarizerCalls: 1, summarizerInputTokens: 900, summarizerOutputTokens: 50 });
    expect(await totals('s3')).to.include({
      turns: 3,
      inputTokens: 4500,
      cachedInputTokens: 2560,
      outputTokens: 240,
      summarizerCalls: 1,
      summarizerInputTokens: 900,
      summarizerOutputTokens: 50,
      estimatedCostNanos: 7_245_000,
      estimatedCost: 0.007245,
      estimatedCompactionCostNanos: 165_000,
      estimatedCompactionCost: 0.000165,
      currency: 'USD',
    });
  });

  it('records nothing in metadata when recordUsage is false, and still reports the turn', async function () {
    h.server.enqueue({ content: 'x', usage: { prompt_tokens: 10, completion_tokens: 1 } });
    const response = await h
      .memoryWith({ metadataStore: h.repository, recordUsage: false })
      .call({ sessionId: 's4', messages: [user('q')] });
    expect(response.turnUsage.inputTokens).to.equal(10);
    expect((await h.repository.findById('s4'))!.metadata[METADATA_USAGE]).to.equal(undefined);
  });

  it('with compactBeforeCall, a cache-aware trigger compacts after a pause longer than the cache lifetime, before the call', async function () {
    let offsetMs = 0;
    const memory = h.memoryWith({
      compactBeforeCall: true,
      compactionTrigger: new CacheAwareTrigger({ maxTokens: 100_000, coldTokens: 1, now: () => new Date(Date.now() + offsetMs) }),
      compactionStrategy: new SlidingWindowCompactionStrategy({ maxEvents: 2 }),
    });
    h.server.respondWith(() => ({ content: 'ok' }));
    await memory.call({ sessionId: 's5', messages: [user('q1')] });
    await memory.call({ sessionId: 's5', messages: [user('q2')] });
    // Warm: the second call saw the whole history.
    expect(h.chatRequests()[1]!.messages!.length).to.equal(3);
    offsetMs = 10 * 60_000;
    const response = await memory.call({ sessionId: 's5', messages: [user('q3')] });
    // Cold: compacted to the last two events before the call, then the new question.
    expect(response.compaction?.archivedEvents.length).to.be.greaterThan(0);
    expect(h.chatRequests()[2]!.messages!.map((m) => m.content)).to.deep.equal(['q2', 'ok', 'q3']);
  });
});

describe('SessionMemory usage totals under concurrent turns of one session', function () {
  for (const backend of allBackends()) {
    describe(`on ${backend.name}`, function () {
      let h: Harness;
      before(async function () {
        await backend.setup(this);
      });
      after(async function () {
        await backend.teardown();
      });
      beforeEach(async function () {
        h = await harness();
      });
      afterEach(async function () {
        await h.close();
      });

      for (const path of ['the service', 'the metadata store'] as const) {
        it(`20 concurrent turns add up exactly, written through ${path}`, async function () {
          const turns = 20;
          const repository = backend.repository();
          const memory = new SessionMemory({
            sessionService: new DefaultSessionService(repository, { logger: silent }),
            client: h.client,
            model: CHAT_MODEL,
            prices: GPT41,
            logger: silent,
            ...(path === 'the metadata store' ? { metadataStore: repository } : {}),
          });
          const sessionId = `c-${randomUUID()}`;
          h.server.respondWith(() => ({
            content: 'ok',
            usage: { prompt_tokens: 1000, completion_tokens: 10, cached_tokens: 512 },
          }));
          await memory.call({ sessionId, messages: [user('first')] });
          await Promise.all(Array.from({ length: turns - 1 }, (_, i) => memory.call({ sessionId, messages: [user(`q${i}`)] })));
          // Per turn: 488 × $2 + 512 × $0.50 + 10 × $8 = $0.001312.
          expect((await repository.findById(sessionId))!.metadata[METADATA_USAGE]).to.include({
            turns,
            inputTokens: turns * 1000,
            cachedInputTokens: turns * 512,
            outputTokens: turns * 10,
            estimatedCostNanos: turns * 1_312_000,
          });
        });
      }
    });
  }
});
