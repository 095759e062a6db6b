import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { ChatPromptTemplate, MessagesPlaceholder } from '@langchain/core/prompts';
import { RunnableLambda, RunnableWithMessageHistory } from '@langchain/core/runnables';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { expect } from 'chai';
import { z } from 'zod';
import {
  Bm25Retriever,
  EventFilter,
  TurnWindowCompactionStrategy,
  IllegalStateError,
  InMemorySessionRepository,
  fromOpenAIMessage,
  type SessionEvent,
} from 'session-compaction';
import { CompactingChatMessageHistory, type CompactingChatMessageHistoryOptions } from 'session-compaction/langchain';
import { RECALL_BLOCK_HEADER } from '../../../src/recall/recallBlock.js';
import { encodeNative } from '../../../src/chat/nativeMessages.js';
import { expectRejects } from '../../support/fixtures.js';
import { startFakeOpenAIServer, type FakeOpenAIServer, type FakeRequestBody } from '../../support/fakeOpenAIServer.js';
import {
  acceptanceRig,
  answer,
  promptTokens,
  question,
  toolOutput,
  TURNS,
  WINDOW_TOKENS,
  type AcceptanceRig,
} from '../../chat/support/acceptance.js';
import { silent } from '../../chat/support/harness.js';

/** An event as stored, without what differs between two calls anyway: the provider's response id. */
function storedReply(event: SessionEvent): unknown {
  const metadata = structuredClone(event.metadata) as { native?: { value?: { data?: { id?: unknown } } } };
  if (metadata.native?.value?.data !== undefined) delete metadata.native.value.data.id;
  return [event.message, metadata];
}

/** A message's serialised form without a streamed reply's chunk bookkeeping and ChatOpenAI's copy of its type. */
function comparable(message: BaseMessage): unknown {
  const dict = structuredClone(message.toDict()) as unknown as { data: Record<string, unknown> };
  const data = dict.data;
  delete data.type;
  delete data.tool_call_chunks;
  const metadata = data.response_metadata as Record<string, unknown> | undefined;
  if (metadata !== undefined) for (const key of ['prompt', 'completion', 'tokenUsage']) delete metadata[key];
  const kwargs = data.additional_kwargs as { tool_calls?: Array<Record<string, unknown>> } | undefined;
  for (const call of kwargs?.tool_calls ?? []) delete call.index;
  return dict;
}

const requestTokens = (body: FakeRequestBody) =>
  promptTokens((body.messages ?? []).map((m) => fromOpenAIMessage(m as Parameters<typeof fromOpenAIMessage>[0])));

function ticketResponder(server: FakeOpenAIServer): void {
  server.respondWith((body) => {
    const messages = body.messages ?? [];
    const last = messages[messages.length - 1]!;
    if (last.role === 'tool') return { content: answer(Number(/T-1(\d{3})/.exec(String(last.content))![1])) };
    const turn = Number(/Question (\d+)/.exec(String(last.content))![1]);
    return {
      content: null,
      toolCalls: [{ id: `call_${turn}`, name: 'lookup', arguments: JSON.stringify({ ticket: `T-${1000 + turn}` }) }],
    };
  });
}

const lookup = tool(async ({ ticket }: { ticket: string }) => toolOutput(Number(ticket.slice(2)) - 1000), {
  name: 'lookup',
  description: 'Looks a ticket up',
  schema: z.object({ ticket: z.string() }),
});

describe('CompactingChatMessageHistory through the real @langchain/core', function () {
  let server: FakeOpenAIServer;
  let rig: AcceptanceRig;
  let model: ChatOpenAI;

  beforeEach(async function () {
    server = await startFakeOpenAIServer({ strict: true });
    rig = acceptanceRig();
    model = new ChatOpenAI({ model: 'gpt-test', apiKey: 'test-key', configuration: { baseURL: server.url }, maxRetries: 0 });
  });
  afterEach(async function () {
    await server.close();
    await rig.close();
  });

  const historyWith = (options: Partial<CompactingChatMessageHistoryOptions> = {}) =>
    new CompactingChatMessageHistory({ sessionService: rig.service, sessionId: 's', logger: silent, ...options });

  /** A chain that runs the tool loop and returns every message it produced (tool calls, results, answer). */
  function agentChain(streaming: (input: { question: string }) => boolean) {
    const prompt = ChatPromptTemplate.fromMessages([
      ['system', 'Answer ticket questions with the lookup tool.'],
      new MessagesPlaceholder('history'),
      ['human', '{question}'],
    ]);
    const bound = model.bindTools([lookup]);
    const call = async (messages: BaseMessage[], stream: boolean): Promise<AIMessage | AIMessageChunk> => {
      if (!stream) return bound.invoke(messages);
      let merged: AIMessageChunk | undefined;
      for await (const chunk of await bound.stream(messages)) merged = merged === undefined ? chunk : merged.concat(chunk);
      // The concatenated chunk, as RunnableWithMessageHistory itself would store a streamed reply.
      return merged!;
    };
    // RunnableWithMessageHistory fills in `history` before the lambda runs.
    return RunnableLambda.from(async (input: { question: string; history?: BaseMessage[] }) => {
      const messages = await prompt.formatMessages({ question: input.question, history: input.history ?? [] });
      const produced: BaseMessage[] = [];
      for (let step = 0; step < 5; step++) {
        const reply = await call([...messages, ...produced], streaming(input));
        produced.push(reply);
        if ((reply.tool_calls ?? []).length === 0) break;
        for (const c of reply.tool_calls!) produced.push(await lookup.invoke(c));
      }
      return produced;
    });
  }

  const withHistory = (
    history: (sessionId: string) => CompactingChatMessageHistory,
    streaming = (_: { question: string }) => false,
  ) =>
    new RunnableWithMessageHistory({
      runnable: agentChain(streaming),
      getMessageHistory: history,
      inputMessagesKey: 'question',
      historyMessagesKey: 'history',
    });

  it('works with RunnableWithMessageHistory: history in, the question and every produced message stored', async function () {
    ticketResponder(server);
    const chain = withHistory(() => historyWith());
    await chain.invoke({ question: question(1) }, { configurable: { sessionId: 's' } });
    await chain.invoke({ question: question(2) }, { configurable: { sessionId: 's' } });
    const types = (await historyWith().getMessages()).map((m) => m.getType());
    expect(types).to.deep.equal(['human', 'ai', 'tool', 'ai', 'human', 'ai', 'tool', 'ai']);
    expect(server.rejections).to.deep.equal([]);
    const replayed = server.requests[2]!.messages!.map((m) => m.role);
    expect(replayed).to.deep.equal(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
  });

  it('gives back AI messages with tool calls and tool messages as LangChain classes', async function () {
    const history = historyWith();
    await history.addMessages([
      new HumanMessage('q'),
      new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'lookup', args: { ticket: 'T-1' }, type: 'tool_call' }] }),
      new ToolMessage({ content: 'found', tool_call_id: 'c1', artifact: { rows: 1 } }),
    ]);
    const [, ai, toolMessage] = await history.getMessages();
    expect(ai).to.be.instanceOf(AIMessage);
    expect((ai as AIMessage).tool_calls).to.deep.equal([
      { id: 'c1', name: 'lookup', args: { ticket: 'T-1' }, type: 'tool_call' },
    ]);
    expect(toolMessage).to.be.instanceOf(ToolMessage);
    expect((toolMessage as ToolMessage).artifact).to.deep.equal({ rows: 1 });
    const [event] = (await rig.service.getEvents('s')).slice(2);
    expect(event!.message).to.deep.equal({ type: 'tool', responses: [{ id: 'c1', name: 'lookup', responseData: 'found' }] });
  });

  it('a streamed turn stores the same neutral messages as a non-streamed one, and reads back as the chunks it stored', async function () {
    ticketResponder(server);
    await withHistory(() => historyWith({ sessionId: 'plain' })).invoke(
      { question: question(3) },
      { configurable: { sessionId: 'plain' } },
    );
    await withHistory(
      () => historyWith({ sessionId: 'streamed' }),
      () => true,
    ).invoke({ question: question(3) }, { configurable: { sessionId: 'streamed' } });
    const [a, b] = await Promise.all([rig.service.getEvents('plain'), rig.service.getEvents('streamed')]);
    expect(b.map((e) => e.message)).to.deep.equal(a.map((e) => e.message));
    const [plain, streamed] = await Promise.all([
      historyWith({ sessionId: 'plain' }).getMessages(),
      historyWith({ sessionId: 'streamed' }).getMessages(),
    ]);
    expect(plain.map((m) => m.constructor.name)).to.deep.equal(['HumanMessage', 'AIMessage', 'ToolMessage', 'AIMessage']);
    expect(streamed.map((m) => m.constructor.name)).to.deep.equal([
      'HumanMessage',
      'AIMessageChunk',
      'ToolMessage',
      'AIMessageChunk',
    ]);
  });

  it('RunnableWithMessageHistory streamed and invoked store the same neutral messages; the streamed reply reads back as its chunk', async function () {
    const prompt = ChatPromptTemplate.fromMessages([new MessagesPlaceholder('history'), ['human', '{question}']]);
    const chain = (id: string) =>
      new RunnableWithMessageHistory({
        runnable: prompt.pipe(model),
        getMessageHistory: () => historyWith({ sessionId: id }),
        inputMessagesKey: 'question',
        historyMessagesKey: 'history',
      });
    for (const q of ['Hello?', 'And again?']) {
      server.enqueue({ content: `Reply to ${q}` }, { content: `Reply to ${q}` });
      await chain('plain').invoke({ question: q }, { configurable: { sessionId: 'plain' } });
      for await (const _chunk of await chain('streamed').stream({ question: q }, { configurable: { sessionId: 'streamed' } })) {
        // drain
      }
    }
    const [a, b] = await Promise.all([rig.service.getEvents('plain'), rig.service.getEvents('streamed')]);
    expect(a).to.have.length(4);
    expect(b.map((e) => e.message)).to.deep.equal(a.map((e) => e.message));
    expect(a.map(storedReply)[1]).to.not.deep.equal(b.map(storedReply)[1]);
    // What comes back is what RunnableWithMessageHistory stored: the chunk, as InMemoryChatMessageHistory keeps it.
    const replayed = await historyWith({ sessionId: 'streamed' }).getMessages();
    expect(replayed[1]).to.be.instanceOf(AIMessageChunk);
    expect((await historyWith({ sessionId: 'plain' }).getMessages())[1]).to.not.be.instanceOf(AIMessageChunk);
  });

  it("clear archives by default (getAllMessages keeps everything), deletes with onClear: 'delete'", async function () {
    const history = historyWith();
    await history.addMessages([new HumanMessage('a'), new AIMessage('b')]);
    await history.clear();
    expect(await history.getMessages()).to.deep.equal([]);
    expect((await history.getAllMessages()).map((m) => m.content)).to.deep.equal(['a', 'b']);
    const deleting = historyWith({ sessionId: 'gone', onClear: 'delete' });
    await deleting.addMessage(new HumanMessage('x'));
    await deleting.clear();
    expect(await rig.service.findById('gone')).to.equal(null);
  });

  it("refuses another user's session; works on any repository", async function () {
    await historyWith({ userId: 'alice' }).addMessage(new HumanMessage('mine'));
    await expectRejects(historyWith({ userId: 'mallory' }).getMessages(), IllegalStateError, 'does not belong');
    await expectRejects(
      historyWith({ userId: 'mallory' }).addMessage(new HumanMessage('x')),
      IllegalStateError,
      'does not belong',
    );
    const onMemory = new CompactingChatMessageHistory({
      repository: new InMemorySessionRepository(),
      sessionId: 'm',
      logger: silent,
    });
    await onMemory.addMessage(new HumanMessage('x'));
    expect((await onMemory.getMessages()).map((m) => m.content)).to.deep.equal(['x']);
  });

  it(`${TURNS} turns with tool calls through RunnableWithMessageHistory on SQLite: compacts on write, every request valid and within the window, nothing lost`, async function () {
    this.timeout(180_000);
    ticketResponder(server);
    const produced: BaseMessage[] = [];
    const history = () => historyWith({ compactionTrigger: rig.trigger, compactionStrategy: rig.strategy });
    const chain = withHistory(history, (input) => Number(/Question (\d+)/.exec(input.question)![1]) % 5 === 0);
    for (let turn = 1; turn <= TURNS; turn++) {
      const out = (await chain.invoke({ question: question(turn) }, { configurable: { sessionId: 's' } })) as BaseMessage[];
      produced.push(new HumanMessage(question(turn)), ...out);
      expect(out[out.length - 1]!.content).to.equal(answer(turn));
    }
    expect(server.rejections, 'requests the API would have refused').to.deep.equal([]);
    expect(server.requests).to.have.length(2 * TURNS);
    expect(Math.max(...server.requests.map(requestTokens))).to.be.at.most(WINDOW_TOKENS);
    expect(rig.compactions()).to.be.at.least(2);
    expect((await rig.service.getEvents('s', EventFilter.all())).some((e) => e.archived)).to.equal(true);
    const all = await historyWith().getAllMessages();
    // LangChain sets optional keys to `undefined`; stored JSON leaves them out, which means the same. A
    // streamed reply is stored as the whole reply it stands for (no chunk bookkeeping).
    expect(encodeNative(all.map(comparable))).to.deep.equal(encodeNative(produced.map(comparable)));
  });

  describe('with recall', function () {
    const recallHistory = (options: Partial<CompactingChatMessageHistoryOptions> = {}) =>
      historyWith({ recall: { retriever: new Bm25Retriever({ sessionService: rig.service }) }, ...options });

    /** A fact said once, then archived by compaction: only recall can bring it back. */
    async function archivedFact(): Promise<void> {
      const history = historyWith();
      await history.addMessages([new HumanMessage('My locker code is 4711.'), new AIMessage('Noted.')]);
      for (let i = 0; i < 3; i++) await history.addMessages([new HumanMessage(`Small talk ${i}`), new AIMessage('Sure.')]);
      await rig.service.compact('s', () => true, new TurnWindowCompactionStrategy({ maxTurns: 1 }));
      expect((await history.getMessages()).map((m) => m.content)).to.not.include('My locker code is 4711.');
    }

    it('getMessages quotes the archived events that match an unanswered question, right before it', async function () {
      await archivedFact();
      const history = recallHistory();
      await history.addMessage(new HumanMessage('What is my locker code?'));
      const messages = await history.getMessages();
      expect(messages.at(-1)!.content).to.equal('What is my locker code?');
      expect(messages.at(-2)).to.be.instanceOf(HumanMessage);
      expect(String(messages.at(-2)!.content)).to.include('My locker code is 4711.');
    });

    it('through RunnableWithMessageHistory the block reaches the model, last before the input, and is never stored', async function () {
      await archivedFact();
      const prompt = ChatPromptTemplate.fromMessages([new MessagesPlaceholder('history'), ['human', '{question}']]);
      const chain = new RunnableWithMessageHistory({
        runnable: prompt.pipe(model),
        getMessageHistory: () => recallHistory(),
        inputMessagesKey: 'question',
        historyMessagesKey: 'history',
      });
      server.enqueue({ content: 'Nice.' });
      await chain.invoke({ question: 'More small talk?' }, { configurable: { sessionId: 's' } });
      const sent = server.requests.at(-1)!.messages!;
      // The window ends with the model's reply: the block (recalled for "Small talk 2") goes last, before the input.
      expect(String(sent.at(-2)!.content)).to.include(RECALL_BLOCK_HEADER);
      expect(sent.at(-1)).to.deep.include({ role: 'user', content: 'More small talk?' });
      const log = await rig.service.getEvents('s', EventFilter.all());
      expect(log.filter((e) => (e.text ?? '').includes(RECALL_BLOCK_HEADER))).to.deep.equal([]);
      expect(log.slice(-2).map((e) => e.text)).to.deep.equal(['More small talk?', 'Nice.']);
      expect(server.rejections).to.deep.equal([]);
    });
  });
});
