import { createOpenAI } from '@ai-sdk/openai';
import {
  convertToModelMessages,
  generateText,
  jsonSchema,
  stepCountIs,
  streamText,
  tool,
  validateUIMessages,
  type ModelMessage,
} from 'ai';
import { expect } from 'chai';
import {
  Bm25Retriever,
  EventFilter,
  IllegalStateError,
  Messages,
  TurnWindowCompactionStrategy,
  fromOpenAIMessage,
  type SessionEvent,
} from 'session-compaction';
import {
  AiSdkSessionMemory,
  fromModelMessages,
  toModelMessages,
  type AiSdkSessionMemoryOptions,
} from 'session-compaction/ai-sdk';
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

/** The SDK sets optional keys to `undefined`; stored JSON leaves them out, which means the same. */
const same = (value: unknown) => encodeNative(value);

const requestTokens = (body: FakeRequestBody) =>
  promptTokens((body.messages ?? []).map((m) => fromOpenAIMessage(m as Parameters<typeof fromOpenAIMessage>[0])));

const lookup = tool({
  description: 'Looks a ticket up',
  inputSchema: jsonSchema<{ ticket: string }>({
    type: 'object',
    properties: { ticket: { type: 'string' } },
    required: ['ticket'],
  }),
  execute: async ({ ticket }) => toolOutput(Number(ticket.slice(2)) - 1000),
});

/** A question gets a lookup call; the tool result gets the answer. */
function ticketResponder(server: FakeOpenAIServer): void {
  server.respondWith((body) => {
    const messages = body.messages ?? [];
    const last = messages[messages.length - 1]!;
    if (last.role === 'tool') {
      const turn = Number(/T-1(\d{3})/.exec(String(last.content))![1]);
      return { content: answer(turn) };
    }
    const turn = Number(/Question (\d+)/.exec(String(last.content))![1]);
    return {
      content: null,
      toolCalls: [{ id: `call_${turn}`, name: 'lookup', arguments: JSON.stringify({ ticket: `T-${1000 + turn}` }) }],
    };
  });
}

describe('AiSdkSessionMemory through the real `ai` package', function () {
  let server: FakeOpenAIServer;
  let rig: AcceptanceRig;
  let model: ReturnType<ReturnType<typeof createOpenAI>['chat']>;

  beforeEach(async function () {
    server = await startFakeOpenAIServer({ strict: true });
    rig = acceptanceRig();
    model = createOpenAI({ baseURL: server.url, apiKey: 'test-key' }).chat('gpt-test');
  });
  afterEach(async function () {
    await server.close();
    await rig.close();
  });

  const memoryWith = (options: Partial<AiSdkSessionMemoryOptions> = {}) =>
    new AiSdkSessionMemory({ sessionService: rig.service, logger: silent, ...options });
  const ask = (text: string): ModelMessage[] => [{ role: 'user', content: text }];

  it('gives generateText the history and the new message, and returns its result', async function () {
    const memory = memoryWith();
    server.enqueue({ content: 'Hello!' }, { content: 'Still here.' });
    await memory.generateText({ sessionId: 's', messages: ask('hi') }, (prompt) => generateText({ model, ...prompt }));
    const result = await memory.generateText(
      { sessionId: 's', messages: [{ role: 'system', content: 'Be brief.' }, ...ask('again')] },
      (prompt) => generateText({ model, ...prompt }),
    );
    expect(result.text).to.equal('Still here.');
    expect(server.requests[1]!.messages).to.deep.equal([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'again' },
    ]);
  });

  it('stores every step of a multi-step tool run: the call, its result and the final answer', async function () {
    const memory = memoryWith();
    ticketResponder(server);
    const result = await memory.generateText({ sessionId: 's', messages: ask(question(3)) }, (prompt) =>
      generateText({ model, tools: { lookup }, stopWhen: stepCountIs(5), ...prompt }),
    );
    expect(result.text).to.equal(answer(3));
    expect(result.steps).to.have.length(2);
    const events = await rig.service.getEvents('s');
    expect(events.map((e) => e.messageType)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
    expect(events[1]!.message).to.deep.include({
      toolCalls: [{ id: 'call_3', type: 'function', name: 'lookup', arguments: '{"ticket":"T-1003"}' }],
    });
    expect(events[2]!.message).to.deep.equal({
      type: 'tool',
      responses: [{ id: 'call_3', name: 'lookup', responseData: toolOutput(3) }],
    });
    // What is stored converts back to what the SDK returned.
    expect(same(toModelMessages(events.slice(1)).messages)).to.deep.equal(same(result.responseMessages));
  });

  it('a streamed turn stores exactly what the same non-streamed turn stores', async function () {
    const memory = memoryWith();
    ticketResponder(server);
    const plain = await memory.generateText({ sessionId: 'plain', messages: ask(question(4)) }, (prompt) =>
      generateText({ model, tools: { lookup }, stopWhen: stepCountIs(5), ...prompt }),
    );
    const { result, stored } = await memory.streamText({ sessionId: 'streamed', messages: ask(question(4)) }, (prompt) =>
      streamText({ model, tools: { lookup }, stopWhen: stepCountIs(5), ...prompt }),
    );
    let streamedText = '';
    for await (const delta of result.textStream) streamedText += delta;
    await stored;
    expect(streamedText).to.equal(plain.text);
    const [a, b] = await Promise.all([rig.service.getEvents('plain'), rig.service.getEvents('streamed')]);
    const shape = (events: SessionEvent[]) => events.map((e) => [e.message, e.metadata]);
    expect(shape(b)).to.deep.equal(shape(a));
  });

  it('restores useChat messages that the SDK validates and converts back to the stored model messages', async function () {
    const memory = memoryWith();
    ticketResponder(server);
    for (const turn of [1, 2]) {
      await memory.generateText({ sessionId: 's', messages: ask(question(turn)) }, (prompt) =>
        generateText({ model, tools: { lookup }, stopWhen: stepCountIs(5), ...prompt }),
      );
    }
    const ui = await memory.uiMessages('s');
    expect(ui.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
    await validateUIMessages({ messages: ui, tools: { lookup } });
    const events = await rig.service.getEvents('s');
    // The SDK writes user text as a text part where the log holds a string: the same conversation.
    const restored = fromModelMessages(await convertToModelMessages(ui, { tools: { lookup } })).map((e) => e.message);
    expect(restored).to.deep.equal(events.map((e) => e.message));
  });

  it("refuses another user's session, in a turn and when restoring it", async function () {
    const memory = memoryWith();
    server.enqueue({ content: 'hi alice' });
    await memory.generateText({ sessionId: 's', userId: 'alice', messages: ask('hi') }, (prompt) =>
      generateText({ model, ...prompt }),
    );
    await expectRejects(memory.uiMessages('s', { userId: 'mallory' }), IllegalStateError, 'does not belong');
    await expectRejects(
      memory.generateText({ sessionId: 's', userId: 'mallory', messages: ask('x') }, (prompt) =>
        generateText({ model, ...prompt }),
      ),
      IllegalStateError,
      'does not belong',
    );
  });

  it('keeps image and file parts: a URL as the reference it is, inline bytes byte for byte', async function () {
    const memory = memoryWith();
    server.enqueue({ content: 'A cat.' });
    const bytes = new Uint8Array([137, 80, 78, 71, 0, 255]);
    const message: ModelMessage = {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'file', data: new URL('https://example.com/cat.png'), mediaType: 'image/png' },
        { type: 'file', data: bytes, mediaType: 'application/pdf', filename: 'a.pdf' },
      ],
    };
    await memory.generateText({ sessionId: 's', messages: [message] }, (prompt) => generateText({ model, ...prompt }));
    const [stored] = await rig.service.getEvents('s');
    expect(stored!.text).to.equal(
      'What is this?\n[file (image/png): https://example.com/cat.png]\n[file a.pdf (application/pdf): inline data]',
    );
    expect(toModelMessages([stored!]).messages).to.deep.equal([message]);
  });

  it('with an attachment store, inline bytes go to the store and the log and the prompt keep its URL', async function () {
    const kept: Array<{ data: Uint8Array; mediaType: string; sessionId: string }> = [];
    const memory = memoryWith({
      attachments: {
        put: async (file) => {
          kept.push(file);
          return `https://files.example.com/${kept.length}.png`;
        },
      },
    });
    server.enqueue({ content: 'A cat.' });
    const bytes = new Uint8Array([137, 80, 78, 71, 1, 2, 3]);
    await memory.generateText(
      {
        sessionId: 's',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'file', data: bytes, mediaType: 'image/png' },
            ],
          },
        ],
      },
      (prompt) => generateText({ model, ...prompt }),
    );
    expect(kept).to.have.length(1);
    expect([...kept[0]!.data]).to.deep.equal([...bytes]);
    expect(kept[0]).to.deep.include({ mediaType: 'image/png', sessionId: 's' });
    const [stored] = await rig.service.getEvents('s');
    expect(stored!.text).to.equal('What is this?\n[file (image/png): https://files.example.com/1.png]');
    expect(JSON.stringify(server.requests[0]!.messages)).to.include('https://files.example.com/1.png');
  });

  it('with recall, the archived turns that match the question come back in the prompt', async function () {
    await rig.service.create({ id: 's', userId: 'u' });
    await rig.service.appendMessage('s', Messages.user('My locker code is 4711.'));
    await rig.service.appendMessage('s', Messages.assistant('Noted.'));
    for (let i = 0; i < 3; i++) {
      await rig.service.appendMessage('s', Messages.user(`Small talk ${i}`));
      await rig.service.appendMessage('s', Messages.assistant('Sure.'));
    }
    await rig.service.compact('s', () => true, new TurnWindowCompactionStrategy({ maxTurns: 1 }));
    // The fact is archived: only recall can bring it back.
    expect((await rig.service.getEvents('s', EventFilter.active())).map((e) => e.text)).to.not.include('My locker code is 4711.');
    const memory = memoryWith({ recall: { retriever: new Bm25Retriever({ sessionService: rig.service }) } });
    server.enqueue({ content: '4711' });
    await memory.generateText({ sessionId: 's', messages: ask('What is my locker code?') }, (prompt) =>
      generateText({ model, ...prompt }),
    );
    const sent = JSON.stringify(server.requests[0]!.messages);
    expect(sent).to.include('My locker code is 4711.');
  });

  it(`${TURNS} turns with tool calls on SQLite: compacts, every request valid and within the window, nothing lost`, async function () {
    this.timeout(180_000);
    const memory = memoryWith({
      compactionTrigger: rig.trigger,
      compactionStrategy: rig.strategy,
      contextWindowTokens: WINDOW_TOKENS,
    });
    ticketResponder(server);
    const exchanged: ModelMessage[] = [];
    for (let turn = 1; turn <= TURNS; turn++) {
      const messages = ask(question(turn));
      if (turn % 5 === 0) {
        const { result, stored } = await memory.streamText({ sessionId: 'long', messages }, (prompt) =>
          streamText({ model, tools: { lookup }, stopWhen: stepCountIs(5), ...prompt }),
        );
        await result.consumeStream();
        await stored;
        exchanged.push(...messages, ...(await result.responseMessages));
      } else {
        const result = await memory.generateText({ sessionId: 'long', messages }, (prompt) =>
          generateText({ model, tools: { lookup }, stopWhen: stepCountIs(5), ...prompt }),
        );
        exchanged.push(...messages, ...result.responseMessages);
      }
    }
    expect(server.rejections, 'requests the API would have refused').to.deep.equal([]);
    expect(server.requests).to.have.length(2 * TURNS);
    expect(Math.max(...server.requests.map(requestTokens))).to.be.at.most(WINDOW_TOKENS);
    expect(rig.compactions()).to.be.at.least(2);
    const all = await rig.service.getEvents('long', EventFilter.all());
    expect(all.some((e) => e.archived)).to.equal(true);
    expect(same(toModelMessages(all).messages)).to.deep.equal(same(exchanged));
  });
});
