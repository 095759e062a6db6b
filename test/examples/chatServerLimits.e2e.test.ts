import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import type { Container } from 'inversify';
import { buildChatServer, USER_HEADER } from '../../examples/chat-server/app.js';
import type { ChatServerConfig } from '../../examples/chat-server/config.js';
import { createChatContainer } from '../../examples/chat-server/container.js';
import { RepositoryConnectionError, TYPES, type SessionRepository } from 'session-compaction';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fakeOpenAIServer.js';
import { silent } from '../chat/support/harness.js';

const MAX_BODY = 4096;

describe('examples/chat-server refuses bad requests before touching storage', function () {
  this.timeout(60_000);
  let fake: FakeOpenAIServer;
  let app: FastifyInstance;
  let container: Container;
  let base: string;
  /** Every repository call, by method name. */
  let calls: string[];
  /** Repository methods that fail as a dropped database connection does. */
  const unreachable = new Set<string>();

  before(async function () {
    fake = await startFakeOpenAIServer();
    fake.respondWith(() => ({ content: 'an answer' }));
    const config: ChatServerConfig = {
      openaiBaseURL: fake.url,
      openaiApiKey: 'test',
      model: 'chat-model',
      repository: 'memory',
      sqlitePath: ':memory:',
      contextWindowTokens: 8000,
      thresholdRatio: 0.7,
      keepEvents: 4,
      recallTools: false,
      maxToolRounds: 0,
      logLevel: 'error',
      maxBodyBytes: MAX_BODY,
    };
    container = createChatContainer(config, { logger: silent });
    const repo = container.get<SessionRepository>(TYPES.SessionRepository) as unknown as Record<string, unknown>;
    for (const name of [
      'save',
      'saveIfAbsent',
      'findById',
      'findByUserId',
      'appendEvent',
      'findEvents',
      'getEventVersion',
      'compactEvents',
    ]) {
      const original = repo[name] as (...args: unknown[]) => unknown;
      repo[name] = async (...args: unknown[]) => {
        calls.push(name);
        if (unreachable.has(name)) {
          throw new RepositoryConnectionError(`PostgreSQL connection lost during ${name}: terminating connection`, {
            backend: 'postgres',
            operation: name,
            cause: new Error('57P01'),
          });
        }
        return original.apply(repo, args);
      };
    }
    app = buildChatServer(container);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async function () {
    await app?.close();
    await fake?.close();
  });
  beforeEach(() => (calls = []));

  async function post(
    body: string,
    headers: Record<string, string> = { 'content-type': 'application/json', [USER_HEADER]: 'alice' },
  ) {
    const res = await fetch(`${base}/v1/query`, { method: 'POST', headers, body });
    return { status: res.status, body: (await res.json()) as { error?: string }, retryAfter: res.headers.get('retry-after') };
  }

  it('an oversized body is answered 413, not read further, nothing looked up', async function () {
    const res = await post(JSON.stringify({ query: 'x'.repeat(MAX_BODY * 4) }));
    expect(res.status).to.equal(413);
    expect(calls).to.deep.equal([]);
  });

  it('malformed JSON is answered 400', async function () {
    const res = await post('{"query": "unterminated');
    expect(res.status).to.equal(400);
    expect(calls).to.deep.equal([]);
  });

  it('a body that is JSON but not a query (wrong types, unknown fields) is answered 400', async function () {
    for (const body of [{ query: 42 }, { query: 'hi', conversation_id: ['x'] }, { query: 'hi', extra: true }, []]) {
      expect((await post(JSON.stringify(body))).status, JSON.stringify(body)).to.equal(400);
    }
    expect(calls).to.deep.equal([]);
  });

  it('a body that is not JSON is answered 415', async function () {
    expect((await post('query=hi', { 'content-type': 'text/plain', [USER_HEADER]: 'alice' })).status).to.equal(415);
    expect(calls).to.deep.equal([]);
  });

  it('no identity is answered 401 before the body is even parsed, oversized or not', async function () {
    expect((await post(JSON.stringify({ query: 'hi' }), { 'content-type': 'application/json' })).status).to.equal(401);
    expect((await post('x'.repeat(MAX_BODY * 4), { 'content-type': 'application/json' })).status).to.equal(401);
    expect(calls).to.deep.equal([]);
  });

  it("another user's conversation is answered 403 after the session lookup alone: no history read, nothing written", async function () {
    const created = await post(JSON.stringify({ query: 'mine' }));
    expect(created.status).to.equal(200);
    const id = (created.body as { conversation_id: string }).conversation_id;
    calls = [];
    const res = await post(JSON.stringify({ query: 'show me', conversation_id: id }), {
      'content-type': 'application/json',
      [USER_HEADER]: 'mallory',
    });
    expect(res.status).to.equal(403);
    expect(calls).to.deep.equal(['findById']);
  });

  it('a session store that is unreachable for a moment is answered 503 with Retry-After', async function () {
    unreachable.add('findById');
    try {
      const res = await post(JSON.stringify({ query: 'hi', conversation_id: 'c-503' }));
      expect(res.status).to.equal(503);
      expect(res.retryAfter).to.equal('1');
    } finally {
      unreachable.clear();
    }
  });
});
