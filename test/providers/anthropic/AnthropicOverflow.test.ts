import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { ContextOverflowError, DefaultSessionService, EventFilter, InMemorySessionRepository } from 'session-compaction';
import { AnthropicSessionMemory } from 'session-compaction/anthropic';
import {
  startFakeAnthropicServer,
  type FakeAnthropicRequest,
  type FakeAnthropicServer,
} from '../../support/fakeAnthropicServer.js';
import { anthropicPromptTooLong, anthropicRequestTooLarge } from '../../support/providerRefusals.js';
import { rejection } from '../../support/rejection.js';
import { silent } from '../../chat/support/harness.js';

/** The fake model's count of a prompt (characters / 4 of system and messages). */
const providerTokens = (body: FakeAnthropicRequest) =>
  Math.ceil(JSON.stringify([body.system ?? '', body.messages ?? []]).length / 4);

describe('AnthropicSessionMemory: recovery from a context-overflow refusal', function () {
  let server: FakeAnthropicServer;
  let service: DefaultSessionService;
  let memory: AnthropicSessionMemory;
  let window = Infinity;
  let refuseAll = false;

  const question = (i: number) => `Question ${i}: ${'what changed in the billing service this sprint? '.repeat(8)}`;
  const ask = (sessionId: string, text: string) =>
    memory.call({ sessionId, system: 'Be brief.', messages: [{ role: 'user', content: text }] });

  beforeEach(async function () {
    window = Infinity;
    refuseAll = false;
    server = await startFakeAnthropicServer();
    server.respondWith((body) => {
      const tokens = providerTokens(body);
      if (refuseAll || tokens > window) return anthropicPromptTooLong(tokens, Number.isFinite(window) ? window : 200000);
      return { text: 'noted' };
    });
    const repository = new InMemorySessionRepository();
    service = new DefaultSessionService(repository, { logger: silent });
    memory = new AnthropicSessionMemory({
      sessionService: service,
      client: new Anthropic({ baseURL: server.url, apiKey: 'test', maxRetries: 0 }),
      model: 'claude-test',
      metadataStore: repository,
      logger: silent,
    });
  });
  afterEach(async function () {
    await server.close();
  });

  async function fill(sessionId: string, turns: number): Promise<void> {
    for (let i = 1; i <= turns; i++) await ask(sessionId, question(i));
  }

  it("a first prompt refused with 'prompt is too long: N tokens > M maximum': the turn succeeds after exactly one retry", async function () {
    await fill('a1', 8);
    window = Math.floor(providerTokens(server.requests.at(-1)!) * 0.6);
    const before = server.requests.length;

    const response = await ask('a1', 'And the invoices?');

    const turn = server.requests.slice(before);
    expect(turn).to.have.length(2);
    expect(server.rejections).to.deep.equal([]); // every request was well-formed
    expect(providerTokens(turn[1]!)).to.be.at.most(window);
    expect(JSON.stringify(turn[1]!.system)).to.include('Be brief.');
    expect(turn[1]!.messages!.at(-1)).to.deep.include({ role: 'user' });
    expect(JSON.stringify(turn[1]!.messages!.at(-1))).to.include('And the invoices?');
    expect(response.overflow).to.deep.include({ promptTokens: providerTokens(turn[0]!), limitTokens: window });
    expect(response.message.content).to.deep.equal([{ type: 'text', text: 'noted', citations: null }]);
  });

  it('a 413 request_too_large, which states no length: the retried prompt is at most half the refused one', async function () {
    await fill('a2', 8);
    server.enqueue(anthropicRequestTooLarge());
    const before = server.requests.length;

    const response = await ask('a2', 'short question');

    const [refused, retried] = server.requests.slice(before);
    expect(retried).to.not.equal(undefined);
    expect(providerTokens(retried!)).to.be.at.most(providerTokens(refused!) / 2);
    expect(response.overflow).to.deep.include({ status: 413, kind: 'bytes' });
  });

  it('a streamed turn refused before any event is retried once and streams the reply', async function () {
    await fill('a3', 8);
    window = Math.floor(providerTokens(server.requests.at(-1)!) * 0.6);
    const before = server.requests.length;
    const types: string[] = [];
    for await (const event of memory.stream({ sessionId: 'a3', messages: [{ role: 'user', content: 'stream it' }] })) {
      types.push(event.type);
    }
    expect(server.requests.length - before).to.equal(2);
    expect(types[0]).to.equal('context_overflow');
    expect(types.at(-1)).to.equal('done');
    expect(types).to.include('chunk');
  });

  it('a model that refuses everything: one ContextOverflowError naming the session, the question stored', async function () {
    await fill('a4', 5);
    refuseAll = true;
    const before = server.requests.length;
    const error = await rejection(ask('a4', 'are you there?'));
    expect(error).to.be.instanceOf(ContextOverflowError);
    expect((error as ContextOverflowError).sessionId).to.equal('a4');
    expect(server.requests.length - before).to.equal(2);
    const log = await service.getEvents('a4', EventFilter.all());
    expect(log.map((e) => e.text)).to.include('are you there?');
    expect(log).to.have.length(5 * 2 + 1);
  });
});
