/**
 * LangChain's chat-history contract, checked with the real `@langchain/core`: the `RunnableWithMessageHistory`
 * scenarios of its own tests and the checks of its persistent histories' integration tests, each run on
 * `InMemoryChatMessageHistory` (the reference) and on `CompactingChatMessageHistory` with the same result; a
 * tool loop whose `ToolMessage` is the next call's input (never two results for one call, never one made up);
 * and that loop across a compaction, a restart, and on every backend.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryChatMessageHistory, type BaseListChatMessageHistory } from '@langchain/core/chat_history';
import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { ChatPromptTemplate, MessagesPlaceholder } from '@langchain/core/prompts';
import { RunnableLambda, RunnableWithMessageHistory, type Runnable } from '@langchain/core/runnables';
import { tool } from '@langchain/core/tools';
import { FakeListChatModel, FakeLLM, FakeStreamingLLM } from '@langchain/core/utils/testing';
import { ChatOpenAI } from '@langchain/openai';
import { expect } from 'chai';
import { z } from 'zod';
import {
  DefaultSessionService,
  InMemorySessionRepository,
  SqliteSessionRepository,
  TokenCountCompactionStrategy,
  type SessionRepository,
} from 'session-compaction';
import { CompactingChatMessageHistory, DEFAULT_MISSING_TOOL_MESSAGE } from 'session-compaction/langchain';
import { encodeNative } from '../../../src/chat/nativeMessages.js';
import { allBackends } from '../../support/backends.js';
import { startFakeOpenAIServer, type FakeOpenAIServer, type FakeRequestBody } from '../../support/fakeOpenAIServer.js';
import { silent } from '../../chat/support/harness.js';

/** A message as a store keeps it: class, serialised form (keys set to `undefined` absent), no generated id. */
function kept(message: BaseMessage): unknown {
  const dict = structuredClone(message.toDict()) as unknown as { data: Record<string, unknown> };
  delete dict.data.id;
  return [message.constructor.name, encodeNative(dict)];
}

type HistoryFactory = () => (sessionId: string) => BaseListChatMessageHistory;

const reference: HistoryFactory = () => {
  const store = new Map<string, InMemoryChatMessageHistory>();
  return (id) => {
    if (!store.has(id)) store.set(id, new InMemoryChatMessageHistory());
    return store.get(id)!;
  };
};

const ours: HistoryFactory = () => {
  const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
  return (id) => new CompactingChatMessageHistory({ sessionService: service, sessionId: id, logger: silent });
};

/** Runs `scenario` with the reference history and with ours; gives what each history holds afterwards. */
async function onBoth(
  scenario: (histories: (id: string) => BaseListChatMessageHistory) => Promise<unknown>,
): Promise<{ expected: unknown; actual: unknown; outputs: [unknown, unknown] }> {
  const a = reference();
  const b = ours();
  const outA = await scenario(a);
  const outB = await scenario(b);
  const held = async (h: (id: string) => BaseListChatMessageHistory) =>
    Promise.all(['1', '2', '3'].map(async (id) => (await h(id).getMessages()).map(kept)));
  return { expected: await held(a), actual: await held(b), outputs: [outA, outB] };
}

async function drain<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const chunks: T[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('CompactingChatMessageHistory: the LangChain chat-history contract (@langchain/core)', function () {
  describe('as InMemoryChatMessageHistory, through RunnableWithMessageHistory', function () {
    it('a runnable of messages in, text out: the second call sees the first', async function () {
      const { expected, actual, outputs } = await onBoth(async (histories) => {
        const runnable = RunnableLambda.from((messages: BaseMessage[]) =>
          messages
            .filter((m) => m.getType() === 'human')
            .map((m) => m.content)
            .join('\n'),
        );
        const chain = new RunnableWithMessageHistory({ runnable, config: {}, getMessageHistory: histories });
        const config = { configurable: { sessionId: '1' } };
        await chain.invoke([new HumanMessage('hello')], config);
        return chain.invoke([new HumanMessage('good bye')], config);
      });
      expect(outputs[1]).to.equal('hello\ngood bye');
      expect(outputs[1]).to.equal(outputs[0]);
      expect(actual).to.deep.equal(expected);
    });

    it('a chat model invoked, then streamed: the streamed reply reads back as the AIMessageChunk it stored', async function () {
      const { expected, actual } = await onBoth(async (histories) => {
        const chain = new RunnableWithMessageHistory({
          runnable: new FakeListChatModel({ responses: ['Hello world!'] }),
          config: {},
          getMessageHistory: histories,
        });
        const config = { configurable: { sessionId: '2' } };
        await chain.invoke([new HumanMessage('hello')], config);
        const chunks = await drain(await chain.stream([new HumanMessage('good bye')], config));
        expect(chunks.map((c) => c.content).join('')).to.equal('Hello world!');
      });
      expect(actual).to.deep.equal(expected);
      const classes = (actual as unknown[][])[1]!.map((m) => (m as [string])[0]);
      expect(classes).to.deep.equal(['HumanMessage', 'AIMessage', 'HumanMessage', 'AIMessageChunk']);
    });

    it('a messages-in, messages-out chain (prompt and model), invoked and streamed', async function () {
      const { expected, actual } = await onBoth(async (histories) => {
        const prompt = ChatPromptTemplate.fromMessages([
          ['system', 'you are a robot'],
          ['placeholder', '{messages}'],
        ]);
        const runnable = prompt.pipe(new FakeListChatModel({ responses: ['So long and thanks for the fish!!'] }));
        const chain = new RunnableWithMessageHistory({ runnable, config: {}, getMessageHistory: histories });
        const config = { configurable: { sessionId: '2' } };
        await chain.invoke([new HumanMessage('hello')], config);
        await drain(await chain.stream([new HumanMessage('good bye')], config));
      });
      expect(actual).to.deep.equal(expected);
    });

    it('input and history keys with a sequence: the same text out, the same history kept', async function () {
      const { expected, actual, outputs } = await onBoth(async (histories) => {
        const prompt = ChatPromptTemplate.fromMessages([
          ['ai', 'You are a helpful assistant'],
          new MessagesPlaceholder('history'),
          ['human', '{input}'],
        ]);
        const chain = new RunnableWithMessageHistory({
          runnable: prompt.pipe(new FakeLLM({})),
          config: {},
          getMessageHistory: histories,
          inputMessagesKey: 'input',
          historyMessagesKey: 'history',
        });
        const config = { configurable: { sessionId: '3' } };
        await chain.invoke({ input: 'hello' }, config);
        return chain.invoke({ input: 'good bye' }, config);
      });
      expect(outputs[1]).to.equal(outputs[0]);
      expect(actual).to.deep.equal(expected);
    });

    it('streams through: more than one chunk reaches the caller', async function () {
      const prompt = ChatPromptTemplate.fromMessages([new MessagesPlaceholder('history'), ['human', '{input}']]);
      const chain = new RunnableWithMessageHistory({
        runnable: prompt.pipe(new FakeStreamingLLM({})),
        config: {},
        getMessageHistory: ours(),
        inputMessagesKey: 'input',
        historyMessagesKey: 'history',
      }).pipe(new StringOutputParser());
      const chunks = await drain(await chain.stream({ input: 'hello' }, { configurable: { sessionId: '5' } }));
      expect(chunks.length).to.be.greaterThan(1);
    });
  });

  describe('as a persistent history', function () {
    it('adds user and AI messages, reads them back in order, and clears', async function () {
      const { expected, actual } = await onBoth(async (histories) => {
        const history = histories('1');
        await history.addUserMessage('Who is the best vocalist?');
        await history.addAIMessage('Ozzy Osbourne');
        await history.addMessages([new HumanMessage('And the best guitarist?'), new AIMessage('Tony Iommi')]);
        const other = histories('2');
        await other.addUserMessage('a different session');
        await other.clear();
        expect(await other.getMessages()).to.deep.equal([]);
      });
      expect(actual).to.deep.equal(expected);
    });

    it('a new history object on the same session (a new process) reads what the first one stored', async function () {
      const dir = mkdtempSync(join(tmpdir(), 'langchain-contract-'));
      try {
        const path = join(dir, 'history.db');
        const first = new SqliteSessionRepository({ path });
        const writer = new CompactingChatMessageHistory({ repository: first, sessionId: 'chat', logger: silent });
        await writer.addMessages([new HumanMessage('hi'), new AIMessageChunk({ content: 'hello there' })]);
        first.close();
        const second = new SqliteSessionRepository({ path });
        const reader = new CompactingChatMessageHistory({ repository: second, sessionId: 'chat', logger: silent });
        const back = await reader.getMessages();
        expect(back.map((m) => m.constructor.name)).to.deep.equal(['HumanMessage', 'AIMessageChunk']);
        expect(back.map((m) => m.content)).to.deep.equal(['hi', 'hello there']);
        second.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('a tool loop whose ToolMessage is the next call’s input', function () {
    let server: FakeOpenAIServer;
    beforeEach(async function () {
      server = await startFakeOpenAIServer({ strict: true });
      server.respondWith((body) => {
        const last = body.messages!.at(-1)!;
        if (last.role === 'tool') return { content: `The order is ${String(last.content)}.` };
        return {
          content: null,
          toolCalls: [{ id: `call_${body.messages!.length}`, name: 'order_status', arguments: '{"id":7}' }],
        };
      });
    });
    afterEach(() => server.close());

    const orderStatus = tool(async () => 'shipped', {
      name: 'order_status',
      description: 'Status of an order',
      schema: z.object({ id: z.number() }),
    });
    const chainOver = (history: (id: string) => BaseListChatMessageHistory) => {
      const model = new ChatOpenAI({ model: 'gpt-test', apiKey: 'k', configuration: { baseURL: server.url }, maxRetries: 0 });
      return new RunnableWithMessageHistory({
        runnable: model.bindTools([orderStatus]) as unknown as Runnable<BaseMessage[], AIMessage>,
        config: {},
        getMessageHistory: history,
      });
    };

    /** One question: the model calls the tool, the ToolMessage goes in as the next call's input. */
    async function ask(
      history: (id: string) => BaseListChatMessageHistory,
      id: string,
      question: string,
      between?: () => Promise<void>,
    ): Promise<{ answer: AIMessage; read: BaseMessage[] }> {
      const chain = chainOver(history);
      const config = { configurable: { sessionId: id } };
      const call = await chain.invoke([new HumanMessage(question)], config);
      expect(call.tool_calls).to.have.length(1);
      await between?.();
      // What a history read gives while the call waits: the call as it is, no result made up for it.
      const read = await history(id).getMessages();
      const toolMessages = await Promise.all(call.tool_calls!.map((c) => orderStatus.invoke(c) as Promise<ToolMessage>));
      const answer = await chainOver(history).invoke(toolMessages, config);
      return { answer, read };
    }

    /** Every request the server got answers each call exactly once: the strict server refuses anything else. */
    function oneResultPerCall(requests: readonly FakeRequestBody[]): void {
      for (const body of requests) {
        const ids = (body.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
        expect(new Set(ids).size, JSON.stringify(ids)).to.equal(ids.length);
      }
    }

    it('as InMemoryChatMessageHistory: one result per call in every prompt, none made up on a read', async function () {
      const runs: unknown[] = [];
      for (const factory of [reference, ours]) {
        const histories = factory();
        const first = await ask(histories, '1', 'Where is order 7?');
        const second = await ask(histories, '1', 'And now?');
        expect(first.answer.content).to.equal('The order is shipped.');
        for (const { read } of [first, second]) {
          expect(read.at(-1)).to.be.instanceOf(AIMessage);
          expect(read.some((m) => String(m.content) === DEFAULT_MISSING_TOOL_MESSAGE)).to.equal(false);
        }
        runs.push((await histories('1').getMessages()).map((m) => [m.getType(), m.content]));
      }
      expect(runs[1]).to.deep.equal(runs[0]);
      expect(server.rejections).to.deep.equal([]);
      expect(server.requests).to.have.length(8);
      oneResultPerCall(server.requests);
    });

    it('across a compaction while the call waits, and a restart (a new repository on the same SQLite file)', async function () {
      const dir = mkdtempSync(join(tmpdir(), 'langchain-loop-'));
      try {
        const path = join(dir, 'history.db');
        let repository: SessionRepository = new SqliteSessionRepository({ path });
        const histories = (id: string) =>
          new CompactingChatMessageHistory({
            repository,
            sessionId: id,
            logger: silent,
            compactionTrigger: () => true,
            compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: 1 }),
          });
        await ask(histories, 's', 'Where is order 7?');
        const { answer, read } = await ask(histories, 's', 'And now?', async () => {
          (repository as SqliteSessionRepository).close();
          repository = new SqliteSessionRepository({ path });
        });
        expect(answer.content).to.equal('The order is shipped.');
        expect(read.at(-1)).to.be.instanceOf(AIMessage);
        expect(server.rejections).to.deep.equal([]);
        oneResultPerCall(server.requests);
        (repository as SqliteSessionRepository).close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    describe('on every backend', function () {
      for (const backend of allBackends()) {
        describe(backend.name, function () {
          before(async function () {
            await backend.setup(this);
          });
          after(() => backend.teardown());

          it('the tool loop: compacted while the call waits, answered once, nothing made up', async function () {
            const service = new DefaultSessionService(backend.repository(), { logger: silent });
            const histories = (id: string) =>
              new CompactingChatMessageHistory({
                sessionService: service,
                sessionId: id,
                logger: silent,
                compactionTrigger: () => true,
                compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: 1 }),
              });
            const id = `loop-${Date.now()}`;
            for (const question of ['Where is order 7?', 'And now?']) {
              const { answer, read } = await ask(histories, id, question);
              expect(answer.content).to.equal('The order is shipped.');
              expect(read.some((m) => m instanceof ToolMessage && m.status === 'error')).to.equal(false);
            }
            expect(server.rejections).to.deep.equal([]);
            oneResultPerCall(server.requests);
          });
        });
      }
    });
  });
});
