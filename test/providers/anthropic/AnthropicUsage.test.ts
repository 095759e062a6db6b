import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { DefaultSessionService, InMemorySessionRepository } from 'session-compaction';
import { AnthropicSessionMemory } from 'session-compaction/anthropic';
import { PROVIDER_PRESETS } from 'session-compaction/spi';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../../support/fakeAnthropicServer.js';
import { silent } from '../../chat/support/harness.js';

describe('AnthropicSessionMemory usage record', function () {
  let server: FakeAnthropicServer;
  beforeEach(async function () {
    server = await startFakeAnthropicServer();
  });
  afterEach(async function () {
    await server.close();
  });

  it('reports cache reads and writes as Anthropic bills them, priced with the Sonnet 4.5 preset', async function () {
    const memory = new AnthropicSessionMemory({
      sessionService: new DefaultSessionService(new InMemorySessionRepository(), { logger: silent }),
      client: new Anthropic({ baseURL: server.url, apiKey: 'k', maxRetries: 0 }),
      model: 'claude-test',
      prices: PROVIDER_PRESETS['anthropic-claude-sonnet-4.5']!.prices,
      logger: silent,
    });
    server.enqueue({
      text: 'hi',
      usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 1500, cache_creation_input_tokens: 300 },
    });
    const reply = await memory.call({ sessionId: 's', messages: [{ role: 'user', content: 'hello' }] });
    expect(reply.turnUsage).to.include({ inputTokens: 1900, cachedInputTokens: 1500, cacheWriteTokens: 300, outputTokens: 20 });
    // 100 × $3 + 1,500 × $0.30 + 300 × $3.75 + 20 × $15, per million.
    expect(reply.turnUsage.estimatedCost).to.equal(0.002175);
  });
});
