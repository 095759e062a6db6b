import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import type { Container } from 'inversify';
import { buildChatServer, USER_HEADER } from '../../examples/chat-server/app.js';
import { configFromEnv, type ChatServerConfig } from '../../examples/chat-server/config.js';
import { createChatContainer } from '../../examples/chat-server/container.js';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { closeSessionCompaction, EventFilter, TYPES, type SessionService, type TokenCountEstimator } from 'session-compaction';
import { CharacterTokenCountEstimator, SUMMARY_METADATA } from 'session-compaction/spi';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fakeOpenAIServer.js';
import { silent } from '../chat/support/harness.js';
import { freshRedisPrefix, probeRedis } from '../support/redis.js';
import { REDIS_URL, requireService } from '../support/services.js';

const MAIN = fileURLToPath(new URL('../../examples/chat-server/main.ts', import.meta.url));

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

  it('configFromEnv accepts every backend, Redis with REDIS_URL, and names the choices for an unknown one', function () {
    for (const repository of ['sqlite', 'memory', 'postgres', 'redis']) {
      expect(configFromEnv({ REPOSITORY: repository }).repository).to.equal(repository);
    }
    expect(configFromEnv({ REPOSITORY: 'redis', REDIS_URL: 'redis://cache:6379' }).redisUrl).to.equal('redis://cache:6379');
    expect(() => configFromEnv({ REPOSITORY: 'mongo' })).to.throw(
      "REPOSITORY must be sqlite, memory, postgres or redis (got 'mongo')",
    );
  });

  it('main refuses a bad setting with one line and exit code 1, not a stack trace', async function () {
    const run = promisify(execFile);
    const failure = await run(process.execPath, ['--import', 'tsx', '--conditions=session-compaction-source', MAIN], {
      env: { ...process.env, REPOSITORY: 'mongo', PORT: '0' },
      timeout: 30_000,
    }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).to.equal(1);
    expect(failure?.stderr?.trim()).to.equal("chat-server: REPOSITORY must be sqlite, memory, postgres or redis (got 'mongo')");
  });

  describe('on Redis', function () {
    before(async function () {
      await requireService(this, 'Redis', probeRedis);
    });

    it('serves a turn with REPOSITORY=redis and stores it there', async function () {
      const fake = await startFakeOpenAIServer();
      fake.respondWith(() => ({ content: 'hello from the model' }));
      const prefix = freshRedisPrefix();
      const container = createChatContainer(
        { ...baseConfig(fake.url), repository: 'redis', redisUrl: REDIS_URL },
        { logger: silent },
      );
      const app = buildChatServer(container);
      try {
        const base = await app.listen({ port: 0, host: '127.0.0.1' });
        const res = await fetch(`${base}/v1/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [USER_HEADER]: 'alice' },
          body: JSON.stringify({ query: 'hi', conversation_id: `${prefix}-c1` }),
        });
        expect(res.status).to.equal(200);
        const service = container.get<SessionService>(TYPES.SessionService);
        expect((await service.getEvents(`${prefix}-c1`)).map((e) => e.text)).to.deep.equal(['hi', 'hello from the model']);
        await service.delete(`${prefix}-c1`);
      } finally {
        await app.close();
        await closeSessionCompaction(container);
        await fake.close();
      }
    });
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
