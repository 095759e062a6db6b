import { expect } from 'chai';
import {
  Bm25Retriever,
  EventFilter,
  IdempotentSessionEventIdGenerator,
  InvalidArgumentError,
  SlidingWindowCompactionStrategy,
  TurnCountTrigger,
  type Retriever,
  type SessionMemoryStreamEvent,
} from 'session-compaction';
import { RECALL_BLOCK_HEADER } from '../../src/recall/recallBlock.js';
import { echoReplies, harness, type Harness } from './support/harness.js';

const user = (text: string) => ({ role: 'user' as const, content: text });
const system = (text: string) => ({ role: 'system' as const, content: text });
const isBlock = (content: unknown) => typeof content === 'string' && content.startsWith(RECALL_BLOCK_HEADER);

async function collect(stream: AsyncIterable<SessionMemoryStreamEvent>): Promise<SessionMemoryStreamEvent[]> {
  const items: SessionMemoryStreamEvent[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

describe('SessionMemory with recall', function () {
  let h: Harness;
  let retriever: Bm25Retriever;

  beforeEach(async function () {
    h = await harness();
    echoReplies(h.server);
    retriever = new Bm25Retriever({ sessionService: h.service });
  });
  afterEach(async function () {
    retriever.close();
    await h.close();
  });

  /** Keeps the last two events after every turn: everything older is archived, reachable only by recall. */
  const withRecall = (extra: Parameters<Harness['memoryWith']>[0] = {}) =>
    h.memoryWith({
      compactionTrigger: new TurnCountTrigger(1),
      compactionStrategy: new SlidingWindowCompactionStrategy({ maxEvents: 2 }),
      recall: { retriever },
      ...extra,
    });

  async function chat(memory: ReturnType<typeof withRecall>, ...questions: string[]) {
    for (const q of questions) await memory.call({ sessionId: 's', userId: 'alice', messages: [user(q)] });
  }

  it("stores the request's timestamp on its messages, and recall quotes them with that date", async function () {
    const memory = withRecall();
    const written = new Date('2023-05-08T13:56:00Z');
    await memory.call({ sessionId: 's', userId: 'alice', messages: [user('My locker code is 4711.')], timestamp: written });
    await chat(memory, 'I like green tea.', 'The weather is grey today.');
    const locker = (await h.service.getEvents('s')).find((e) => e.text === 'My locker code is 4711.')!;
    expect(locker.timestamp.toISOString()).to.equal(written.toISOString());
    await memory.call({ sessionId: 's', userId: 'alice', messages: [user('What was my locker code?')] });
    const block = h
      .chatRequests()
      .at(-1)!
      .messages!.find((m) => isBlock(m.content));
    expect(String(block!.content)).to.include('[8 May 2023 13:56] User: My locker code is 4711.');
  });

  it("reads a relative date in the question from the request's timestamp", async function () {
    const memory = h.memoryWith({
      compactionTrigger: new TurnCountTrigger(1),
      compactionStrategy: new SlidingWindowCompactionStrategy({ maxEvents: 2 }),
      recall: { retriever, maxTokens: 150, neighbors: 0 },
    });
    for (let i = 0; i < 12; i++) {
      const timestamp = new Date(Date.UTC(2023, 4, 1, 10, i));
      await memory.call({ sessionId: 's', userId: 'alice', messages: [user(`We flew kites at the beach ${i}.`)], timestamp });
    }
    const last = new Date('2023-05-07T10:00:00Z');
    await memory.call({ sessionId: 's', userId: 'alice', messages: [user('We flew kites at the beach 12.')], timestamp: last });
    await memory.call({ sessionId: 's', userId: 'alice', messages: [user('ok')], timestamp: new Date('2023-05-08T09:00:00Z') });
    const ask = async (timestamp?: Date) => {
      await memory.call({
        sessionId: 's',
        userId: 'alice',
        messages: [user('Where did we fly kites yesterday?')],
        ...(timestamp ? { timestamp } : {}),
      });
      return String(
        h
          .chatRequests()
          .at(-1)!
          .messages!.find((m) => isBlock(m.content))?.content,
      );
    };
    expect(await ask(new Date('2023-05-08T12:00:00Z'))).to.include('beach 12.');
    // Asked today instead, "yesterday" names no day of this conversation: the tie goes to the older events.
    expect(await ask()).not.to.include('beach 12.');
  });

  it('refuses a timestamp that is not a valid Date', async function () {
    const memory = withRecall();
    for (const timestamp of [new Date('nope'), '2023-05-08' as unknown as Date]) {
      let error: unknown;
      try {
        await memory.call({ sessionId: 's', userId: 'alice', messages: [user('hi')], timestamp });
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(InvalidArgumentError);
    }
  });

  it('quotes the archived events the new question needs, right before it, and reports them', async function () {
    const memory = withRecall();
    await chat(memory, 'My locker code is 4711.', 'I like green tea.', 'The weather is grey today.');
    const response = await memory.call({
      sessionId: 's',
      userId: 'alice',
      messages: [system('Be brief.'), user('What was my locker code?')],
    });
    const prompt = h.chatRequests().at(-1)!.messages!;
    const blockAt = prompt.findIndex((m) => isBlock(m.content));
    expect(blockAt).to.be.greaterThan(0);
    expect(prompt[0]).to.deep.equal(system('Be brief.'));
    expect(prompt[blockAt + 1]).to.deep.equal(user('What was my locker code?'));
    expect(blockAt).to.equal(prompt.length - 2);
    expect(String(prompt[blockAt]!.content)).to.include('User: My locker code is 4711.');
    const locker = (await h.service.getEvents('s')).find((e) => e.text === 'My locker code is 4711.')!;
    expect(locker.archived).to.equal(true);
    expect(response.recalled).to.include(locker.id);
    const tokens = response.contextTokens!;
    expect(tokens.recall).to.be.greaterThan(0);
    expect(tokens.total).to.equal(tokens.system + tokens.recall + tokens.history);
  });

  it('never stores the recall block', async function () {
    const memory = withRecall();
    await chat(memory, 'My locker code is 4711.', 'I like green tea.', 'What was my locker code?');
    const log = await h.service.getEvents('s');
    expect(log.some((e) => e.id.startsWith('recall-') || (e.text ?? '').includes(RECALL_BLOCK_HEADER))).to.equal(false);
  });

  it('keeps the whole prompt within contextWindowTokens', async function () {
    const memory = withRecall({ contextWindowTokens: 400, calibrate: false });
    await chat(memory, ...Array.from({ length: 8 }, (_, i) => `Fact ${i}: the code word is ${'kiwi '.repeat(5)}${i}.`));
    const response = await memory.call({
      sessionId: 's',
      userId: 'alice',
      messages: [user('What was the code word of fact 2?')],
    });
    expect(response.contextTokens!.total).to.be.at.most(400);
    expect(response.recalled!.length).to.be.greaterThan(0);
  });

  /** Order of compactions and model calls on a third turn whose trigger fires only from then on. */
  async function thirdTurn(extra: Parameters<Harness['memoryWith']>[0]): Promise<string[]> {
    let fire = false;
    const memory = withRecall({ compactionTrigger: () => fire, ...extra });
    await chat(memory, 'one', 'two');
    const events: string[] = [];
    h.service.events.on('compactionCompleted', () => events.push('compacted'));
    h.server.respondWith(() => {
      events.push('model');
      return { content: 'ok' };
    });
    fire = true;
    await chat(memory, 'three');
    return events;
  }

  it('compacts before the model call by default, so the prompt never waits for the guard', async function () {
    expect(await thirdTurn({})).to.deep.equal(['compacted', 'model', 'compacted']);
  });

  it('leaves compactBeforeCall off when asked to', async function () {
    expect(await thirdTurn({ compactBeforeCall: false })).to.deep.equal(['model', 'compacted']);
  });

  it('streams a recall item before the first chunk', async function () {
    const memory = withRecall();
    await chat(memory, 'My locker code is 4711.', 'I like green tea.', 'The weather is grey today.');
    const items = await collect(memory.stream({ sessionId: 's', userId: 'alice', messages: [user('What was my locker code?')] }));
    const types = items.map((i) => i.type);
    expect(types.indexOf('recall')).to.be.lessThan(types.indexOf('chunk'));
    const recall = items.find((i) => i.type === 'recall');
    expect(recall?.type === 'recall' && recall.recalled.map((e) => e.text)).to.include('My locker code is 4711.');
    const done = items.at(-1)!;
    expect(done.type === 'done' && done.response.recalled).to.deep.equal(
      recall?.type === 'recall' ? recall.recalled.map((e) => e.id) : null,
    );
  });

  it('asks the retriever with the incoming user message as the query', async function () {
    const queries: string[] = [];
    const spy: Retriever = {
      retrieve: async (request) => {
        queries.push(request.query);
        return retriever.retrieve(request);
      },
    };
    const memory = withRecall({ recall: { retriever: spy } });
    await chat(memory, 'first', 'second', 'Which tea do I like?');
    expect(queries.at(-1)).to.equal('Which tea do I like?');
  });

  it('never quotes the message of a retried request, nor the reply its first attempt stored', async function () {
    const memory = withRecall({ requestIdGenerator: new IdempotentSessionEventIdGenerator() });
    await chat(memory, 'My locker code is 4711.', 'I like green tea.');
    const retry = { sessionId: 's', userId: 'alice', messages: [user('Is my locker code 4711?')], context: { requestId: 'r1' } };
    await memory.call(retry);
    const again = await memory.call(retry);
    const stored = await h.service.getEvents('s', EventFilter.active());
    for (const e of stored) expect(again.recalled).not.to.include(e.id);
  });

  it('puts the block before the last user message when the request answers tool calls', async function () {
    h.server.respondWith((body) => {
      const last = body.messages!.at(-1)!;
      return last.role === 'tool'
        ? { content: 'The locker is open.' }
        : { toolCalls: [{ id: 'call-1', name: 'open_locker', arguments: '{"code":"4711"}' }] };
    });
    const memory = withRecall({ compactionStrategy: new SlidingWindowCompactionStrategy({ maxEvents: 3 }) });
    await chat(memory, 'My locker code is 4711.', 'I like green tea.');
    await memory.call({ sessionId: 's', userId: 'alice', messages: [user('Open my locker please, the code is in our chat.')] });
    await memory.call({
      sessionId: 's',
      userId: 'alice',
      messages: [{ role: 'tool', tool_call_id: 'call-1', content: 'locker 4711 opened' }],
    });
    const prompt = h.chatRequests().at(-1)!.messages!;
    const roles = prompt.map((m) => (isBlock(m.content) ? 'recall' : m.role));
    const call = roles.lastIndexOf('assistant');
    expect(roles.slice(call)).to.deep.equal(['assistant', 'tool']);
    expect(roles).to.deep.equal(['recall', 'user', 'assistant', 'tool']);
    expect(String(prompt[0]!.content)).to.include('My locker code is 4711.');
  });

  it('refuses a recall option without a retriever', function () {
    expect(() => h.memoryWith({ recall: {} as never })).to.throw(InvalidArgumentError, 'recall.retriever');
  });

  it('adds nothing to responses without recall', async function () {
    const response = await h.memory.call({ sessionId: 's', messages: [user('hi')] });
    expect(response.recalled).to.equal(undefined);
    expect(response.contextTokens).to.equal(undefined);
  });
});
