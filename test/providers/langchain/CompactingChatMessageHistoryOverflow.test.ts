import { ContextOverflowError as LangChainContextOverflowError } from '@langchain/core/errors';
import { HumanMessage } from '@langchain/core/messages';
import { ChatPromptTemplate, MessagesPlaceholder } from '@langchain/core/prompts';
import { RunnableWithMessageHistory } from '@langchain/core/runnables';
import { ChatOpenAI } from '@langchain/openai';
import { expect } from 'chai';
import { ContextOverflowError, DefaultSessionService, EventFilter, InMemorySessionRepository } from 'session-compaction';
import { CompactingChatMessageHistory } from 'session-compaction/langchain';
import { startFakeOpenAIServer, type FakeOpenAIServer, type FakeRequestBody } from '../../support/fakeOpenAIServer.js';
import { openAIContextLengthExceeded } from '../../support/providerRefusals.js';
import { rejection } from '../../support/rejection.js';
import { silent } from '../../chat/support/harness.js';

const providerTokens = (body: FakeRequestBody) => Math.ceil(JSON.stringify(body.messages ?? []).length / 4);

describe('CompactingChatMessageHistory: recovery from a context-overflow refusal', function () {
  let server: FakeOpenAIServer;
  let service: DefaultSessionService;
  let window = Infinity;
  let refuseAll = false;

  beforeEach(async function () {
    window = Infinity;
    refuseAll = false;
    server = await startFakeOpenAIServer({ strict: true });
    server.respondWith((body) => {
      const tokens = providerTokens(body);
      if (refuseAll || tokens > window) return openAIContextLengthExceeded(Number.isFinite(window) ? window : 1000, tokens);
      return { content: `noted ${String(body.messages!.at(-1)!.content).slice(0, 16)}` };
    });
    service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
  });
  afterEach(async function () {
    await server.close();
  });

  const history = () => new CompactingChatMessageHistory({ sessionService: service, sessionId: 'lc', logger: silent });
  const chain = () =>
    new RunnableWithMessageHistory({
      runnable: ChatPromptTemplate.fromMessages([
        ['system', 'Be brief.'],
        new MessagesPlaceholder('history'),
        ['human', '{question}'],
      ]).pipe(new ChatOpenAI({ model: 'gpt-test', apiKey: 'k', configuration: { baseURL: server.url }, maxRetries: 0 })),
      getMessageHistory: history,
      inputMessagesKey: 'question',
      historyMessagesKey: 'history',
    });
  const ask = (question: string) =>
    history().withOverflowRecovery(() => chain().invoke({ question }, { configurable: { sessionId: 'lc' } }), {
      input: [new HumanMessage(question)],
    });

  it("a prompt refused with OpenAI's context_length_exceeded (through LangChain's ContextOverflowError): one retry, then the reply", async function () {
    for (let i = 0; i < 8; i++) await ask(`item ${i}: ${'details '.repeat(50)}`);
    window = Math.floor(providerTokens(server.requests.at(-1)!) * 0.6);
    const before = server.requests.length;

    const reply = await ask('which items?');

    expect(String(reply.content)).to.match(/^noted which/);
    const turn = server.requests.slice(before);
    expect(turn).to.have.length(2);
    expect(providerTokens(turn[1]!)).to.be.at.most(window);
    const log = await service.getEvents('lc', EventFilter.all());
    expect(log.filter((e) => e.text === 'which items?')).to.have.length(1);
    expect(log.some((e) => e.isArchived())).to.equal(true);
  });

  it('a model that refuses everything: one ContextOverflowError naming the session, the question stored once', async function () {
    for (let i = 0; i < 4; i++) await ask(`item ${i}`);
    refuseAll = true;
    const before = server.requests.length;
    const error = await rejection(ask('still there?'));
    expect(error).to.be.instanceOf(ContextOverflowError);
    expect((error as ContextOverflowError).sessionId).to.equal('lc');
    // What the chain threw: LangChain's own overflow error, wrapping the OpenAI SDK's refusal.
    expect(LangChainContextOverflowError.isInstance((error as Error).cause)).to.equal(true);
    expect(server.requests.length - before).to.equal(2);
    const log = await service.getEvents('lc', EventFilter.all());
    expect(log.filter((e) => e.text === 'still there?')).to.have.length(1);
  });

  it('recoverFromOverflow is null for any other error and changes nothing', async function () {
    await ask('hello');
    expect(await history().recoverFromOverflow(new Error('socket hang up'))).to.equal(null);
    expect(await service.getEvents('lc', EventFilter.all())).to.have.length(2);
  });
});
