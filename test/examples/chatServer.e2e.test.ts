import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import { buildChatServer, USER_HEADER } from '../../examples/chat-server/app.js';
import type { ChatServerConfig } from '../../examples/chat-server/config.js';
import { createChatContainer } from '../../examples/chat-server/container.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fakeOpenAIServer.js';
import { silent } from '../chat/support/harness.js';

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Posts and parses server-sent events as they arrive, calling `onEvent` for each. */
async function streamingQuery(
  base: string,
  userId: string,
  body: object,
  onEvent: (e: SseEvent) => void = () => undefined,
): Promise<{ status: number; events: SseEvent[]; json?: unknown }> {
  const res = await fetch(`${base}/v1/streaming_query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [USER_HEADER]: userId },
    body: JSON.stringify(body),
  });
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream'))
    return { status: res.status, events: [], json: await res.json() };
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(frame)?.[1] ?? 'message';
      const data = JSON.parse(/^data: (.*)$/m.exec(frame)?.[1] ?? '{}') as Record<string, unknown>;
      const e = { event, data };
      events.push(e);
      onEvent(e);
    }
  }
  return { status: res.status, events };
}

async function http(base: string, method: string, path: string, userId: string | null, body?: object) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(userId ? { [USER_HEADER]: userId } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : (JSON.parse(text) as Record<string, unknown>) };
}

const WINDOW = 600;

describe('examples/chat-server end to end (loopback OpenAI-compatible server)', function () {
  this.timeout(120_000);
  let fake: FakeOpenAIServer;
  let app: FastifyInstance;
  let base: string;
  let dir: string;
  let startedSeen = 0;
  let summaryCalls = 0;
  const summaryHeldUntilStarted: boolean[] = [];
  let chatReply: (body: { messages?: Array<{ role: string; content?: unknown }> }) => {
    content?: string | null;
    toolCalls?: Array<{ id?: string; name: string; arguments: string }>;
  };

  before(async function () {
    fake = await startFakeOpenAIServer();
    fake.respondWith(async (body) => {
      if (body.model === 'summary-model') {
        const k = ++summaryCalls;
        // Hold the summary until the stream client has seen the k-th compaction_started (or give up after 3 s).
        const deadline = Date.now() + 3000;
        while (startedSeen < k && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
        summaryHeldUntilStarted.push(startedSeen >= k);
        return { content: `Summary ${k}: the user has been asking numbered questions about the migration plan.` };
      }
      return chatReply(body);
    });
    dir = mkdtempSync(join(tmpdir(), 'chat-server-'));
    const config: ChatServerConfig = {
      openaiBaseURL: fake.url,
      openaiApiKey: 'test',
      model: 'chat-model',
      summaryModel: 'summary-model',
      repository: 'sqlite',
      sqlitePath: join(dir, 'sessions.db'),
      contextWindowTokens: WINDOW,
      thresholdRatio: 0.7,
      keepEvents: 4,
      recallTools: true,
      maxToolRounds: 2,
      logLevel: 'error',
    };
    app = buildChatServer(createChatContainer(config, { logger: silent }));
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });

  after(async function () {
    await app?.close();
    await fake?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(function () {
    chatReply = (body) => {
      const last = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
      return { content: `Answer to "${String(last?.content)}": noted, and here is a short explanation of the next step.` };
    };
  });

  it('40 streamed turns: compaction events before the summary completes, summarized context, window respected, full history kept', async function () {
    const conversation = 'e2e-conversation';
    const statuses: string[] = [];
    const promptTokens: number[] = [];
    let compactionsCompleted = 0;
    for (let i = 1; i <= 40; i++) {
      const { status, events } = await streamingQuery(
        base,
        'alice',
        { conversation_id: conversation, query: `Question ${i}: what should we migrate in step ${i} of the plan?` },
        (e) => {
          if (e.event === 'compaction_started') startedSeen += 1;
        },
      );
      expect(status).to.equal(200);
      const names = events.map((e) => e.event);
      expect(names[0]).to.equal('start');
      expect(names.at(-1)).to.equal('end');
      expect(names.filter((n) => n === 'token').length).to.be.greaterThan(0);
      const started = names.indexOf('compaction_started');
      if (started >= 0) expect(names.indexOf('compaction_completed')).to.be.greaterThan(started);
      compactionsCompleted += names.filter((n) => n === 'compaction_completed').length;
      const end = events.at(-1)!.data;
      statuses.push(end.context_status as string);
      promptTokens.push((end.usage as { prompt_tokens: number }).prompt_tokens);
    }

    expect(compactionsCompleted, 'several compactions').to.be.greaterThanOrEqual(3);
    expect(summaryHeldUntilStarted.length).to.equal(summaryCalls);
    expect(summaryHeldUntilStarted.every(Boolean), 'compaction_started reached the client before each summary returned').to.equal(
      true,
    );
    expect(statuses[0]).to.equal('full');
    expect(statuses.at(-1)).to.equal('summarized');
    const firstSummarized = statuses.indexOf('summarized');
    expect(statuses.slice(firstSummarized).every((s) => s === 'summarized')).to.equal(true);
    expect(Math.max(...promptTokens), 'provider-reported prompt tokens').to.be.at.most(WINDOW);
    if (process.env.E2E_FIGURES)
      console.log({ compactionsCompleted, summaryCalls, maxPrompt: Math.max(...promptTokens), statuses: statuses.join(',') });

    const history = await http(base, 'GET', `/v1/conversations/${conversation}`, 'alice');
    expect(history.status).to.equal(200);
    const events = history.body!.events as Array<{ type: string; text: string; archived: boolean; synthetic: boolean }>;
    const real = events.filter((e) => !e.synthetic);
    expect(real).to.have.length(80);
    expect(history.body!.message_count).to.equal(80);
    expect(real.filter((e) => e.type === 'user').map((e) => e.text)).to.deep.equal(
      Array.from({ length: 40 }, (_, i) => `Question ${i + 1}: what should we migrate in step ${i + 1} of the plan?`),
    );
    expect(real.filter((e) => e.archived).length).to.be.greaterThan(40);
    expect(real.at(-1)!.archived).to.equal(false);
    expect(existsSync(join(dir, 'sessions.db')), 'the default SQLite repository was used').to.equal(true);
  });

  it('POST /v1/query answers JSON with context_status', async function () {
    const r = await http(base, 'POST', '/v1/query', 'carol', { conversation_id: 'carol-1', query: 'hello there' });
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ conversation_id: 'carol-1', context_status: 'full' });
    expect(r.body!.response).to.equal('Answer to "hello there": noted, and here is a short explanation of the next step.');
  });

  describe('isolation between users', function () {
    before(async function () {
      await http(base, 'POST', '/v1/query', 'alice', { conversation_id: 'alice-secret', query: 'my password hint is tangerine' });
    });

    it('no user header → 401', async function () {
      expect((await http(base, 'GET', '/v1/conversations/alice-secret', null)).status).to.equal(401);
    });

    it("another user cannot read, delete or post to alice's conversation", async function () {
      const calls = fake.requests.length;
      const read = await http(base, 'GET', '/v1/conversations/alice-secret', 'mallory');
      expect(read.status).to.equal(403);
      expect(JSON.stringify(read.body)).to.not.include('tangerine');
      expect((await http(base, 'DELETE', '/v1/conversations/alice-secret', 'mallory')).status).to.equal(403);
      const post = await http(base, 'POST', '/v1/query', 'mallory', { conversation_id: 'alice-secret', query: 'hi' });
      expect(post.status).to.equal(403);
      expect(post.body!.error).to.equal("Session 'alice-secret' does not belong to user 'mallory'. Access denied.");
      const stream = await streamingQuery(base, 'mallory', { conversation_id: 'alice-secret', query: 'hi' });
      expect(stream.status).to.equal(403);
      expect(fake.requests.length, 'the model was never called').to.equal(calls);
      const owner = await http(base, 'GET', '/v1/conversations/alice-secret', 'alice');
      expect((owner.body!.events as unknown[]).length).to.equal(2);
    });

    it("the recall tools never reach another user's conversations, whatever the model asks", async function () {
      let round = 0;
      chatReply = () => {
        round += 1;
        if (round === 1) {
          return {
            content: null,
            toolCalls: [
              {
                id: 'c1',
                name: 'cross_session_search',
                arguments: '{"innerThought":"peek","query":"tangerine","userId":"alice"}',
              },
              {
                id: 'c2',
                name: 'conversation_search',
                arguments: '{"innerThought":"peek","query":"tangerine","sessionId":"alice-secret"}',
              },
            ],
          };
        }
        return { content: 'I found nothing.' };
      };
      const r = await http(base, 'POST', '/v1/query', 'mallory', { conversation_id: 'mallory-1', query: 'what is the hint?' });
      expect(r.status).to.equal(200);
      const followUp = fake.requests.filter((b) => b.model === 'chat-model').at(-1)!;
      const toolResults = (followUp.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content);
      expect(toolResults).to.deep.equal(['No results found.', 'No results found.']);
      const own = await http(base, 'GET', '/v1/conversations/mallory-1', 'mallory');
      expect(JSON.stringify(own.body)).to.not.include('password hint');
    });

    it('the owner finds her own fact through cross_session_search', async function () {
      let round = 0;
      chatReply = () =>
        ++round === 1
          ? {
              content: null,
              toolCalls: [{ id: 'c3', name: 'cross_session_search', arguments: '{"innerThought":"x","query":"tangerine"}' }],
            }
          : { content: 'Your hint is tangerine.' };
      const r = await http(base, 'POST', '/v1/query', 'alice', { conversation_id: 'alice-2', query: 'remind me of my hint' });
      expect(r.body!.response).to.equal('Your hint is tangerine.');
      const followUp = fake.requests.filter((b) => b.model === 'chat-model').at(-1)!;
      const tool = (followUp.messages ?? []).find((m) => m.role === 'tool')!;
      expect(JSON.parse(tool.content as string)[0]).to.include({
        sessionId: 'alice-secret',
        text: 'my password hint is tangerine',
      });
    });

    it('the owner can delete her conversation; afterwards it is gone (410 to her)', async function () {
      expect((await http(base, 'DELETE', '/v1/conversations/alice-2', 'alice')).status).to.equal(204);
      const gone = await http(base, 'GET', '/v1/conversations/alice-2', 'alice');
      expect(gone.status).to.equal(410);
      expect(gone.body).to.deep.equal({ error: "conversation 'alice-2' was deleted" });
    });

    it('a deleted conversation id sent again is 410 to its owner and 404 to anyone else, never when it was deleted', async function () {
      for (const path of ['/v1/query', '/v1/streaming_query']) {
        const owner = await http(base, 'POST', path, 'alice', { conversation_id: 'alice-2', query: 'are you there?' });
        expect(owner.status, path).to.equal(410);
        expect(owner.body, path).to.deep.equal({ error: "conversation 'alice-2' was deleted" });
        const other = await http(base, 'POST', path, 'mallory', { conversation_id: 'alice-2', query: 'are you there?' });
        expect(other.status, path).to.equal(404);
        expect(other.body, path).to.deep.equal({ error: "conversation 'alice-2' not found" });
        expect(JSON.stringify(other.body)).to.not.match(/deleted|\d{4}-\d{2}-\d{2}T/);
      }
      const peek = await http(base, 'GET', '/v1/conversations/alice-2', 'mallory');
      expect([peek.status, peek.body]).to.deep.equal([404, { error: "conversation 'alice-2' not found" }]);
    });
  });
});
