import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import type { Container } from 'inversify';
import { buildChatServer, USER_HEADER } from '../../examples/chat-server/app.js';
import { configFromEnv, type ChatServerConfig } from '../../examples/chat-server/config.js';
import { createChatContainer } from '../../examples/chat-server/container.js';
import { EventFilter, TYPES, type SessionService, type TokenCountEstimator } from 'session-compaction';
import { CharacterTokenCountEstimator, SUMMARY_METADATA } from 'session-compaction/spi';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fakeOpenAIServer.js';
import { silent } from '../chat/support/harness.js';

/** Counts estimates; a character estimate keeps the window arithmetic simple. */
class CountingEstimator implements TokenCountEstimator {
  calls = 0;
  private readonly inner = new CharacterTokenCountEstimator();
  estimate(text: string): number {
    this.calls++;
    return this.inner.estimate(text);
  }
}

const baseConfig = (url: string): ChatServerConfig => ({
  openaiBaseURL: url,
  openaiApiKey: 'test',
  model: 'chat-model',
  summaryModel: 'summary-model',
  repository: 'memory',
  sqlitePath: ':memory:',
  contextWindowTokens: 400,
  thresholdRatio: 0.5,
  keepEvents: 2,
  recallTools: false,
  maxToolRounds: 0,
  logLevel: 'error',
});

describe('examples/chat-server startup and degraded summaries', function () {
  this.timeout(60_000);

  it('configFromEnv defaults the summary failureMode to stub, takes SUMMARY_FAILURE_MODE, and refuses an unknown one', function () {
    expect(configFromEnv({}).summaryFailureMode).to.equal('stub');
    expect(configFromEnv({ SUMMARY_FAILURE_MODE: 'skip' }).summaryFailureMode).to.equal('skip');
    expect(() => configFromEnv({ SUMMARY_FAILURE_MODE: 'retry' })).to.throw('SUMMARY_FAILURE_MODE must be stub, skip or throw');
  });

  it('the container warms the token estimator before any request arrives', function () {
    const estimator = new CountingEstimator();
    const container = createChatContainer(baseConfig('http://127.0.0.1:9/v1'), {
      logger: silent,
      tokenCountEstimator: estimator,
    });
    expect(container.get(TYPES.TokenCountEstimator)).to.equal(estimator);
    expect(estimator.calls).to.be.greaterThan(0);
  });

  describe('with the summary model down', function () {
    let fake: FakeOpenAIServer;
    let app: FastifyInstance;
    let container: Container;
    let base: string;
    before(async function () {
      fake = await startFakeOpenAIServer();
      fake.respondWith((body) =>
        body.model === 'summary-model'
          ? { status: 503 }
          : { content: 'An answer long enough to fill the small window of this test quickly, turn after turn.' },
      );
      container = createChatContainer(baseConfig(fake.url), { logger: silent, tokenCountEstimator: new CountingEstimator() });
      app = buildChatServer(container);
      base = await app.listen({ port: 0, host: '127.0.0.1' });
    });
    after(async function () {
      await app?.close();
      await fake?.close();
    });

    it('every turn is answered and the window is compacted behind a mechanical stub summary (default failureMode)', async function () {
      const statuses: number[] = [];
      for (let turn = 1; turn <= 8; turn++) {
        const res = await fetch(`${base}/v1/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [USER_HEADER]: 'alice' },
          body: JSON.stringify({ conversation_id: 'down', query: `Question ${turn} about the migration plan, please.` }),
        });
        statuses.push(res.status);
        await res.arrayBuffer();
      }
      expect(statuses).to.deep.equal(Array(8).fill(200));
      expect(
        fake.requests.some((r) => r.model === 'summary-model'),
        'the summariser was called',
      ).to.equal(true);
      const events = await container.get<SessionService>(TYPES.SessionService).getEvents('down', EventFilter.all());
      expect(events.some((e) => e.archived)).to.equal(true);
      const summaries = events.filter((e) => !e.archived && e.isSynthetic() && e.messageType === 'assistant');
      expect(summaries.map((e) => e.metadata[SUMMARY_METADATA.method])).to.deep.equal(['stub']);
    });
  });
});
