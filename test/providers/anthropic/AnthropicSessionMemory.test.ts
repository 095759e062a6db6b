import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { expect } from 'chai';
import { Bm25Retriever, EventFilter, Messages, TurnWindowCompactionStrategy } from 'session-compaction';
import {
  AnthropicSessionMemory,
  anthropicReplyToParam,
  fromAnthropicPrompt,
  toAnthropicMessages,
  type AnthropicSessionMemoryOptions,
} from 'session-compaction/anthropic';
import { METADATA_TOKEN_CALIBRATION, type TokenCalibration } from 'session-compaction/spi';
import {
  startFakeAnthropicServer,
  type FakeAnthropicRequest,
  type FakeAnthropicServer,
} from '../../support/fakeAnthropicServer.js';
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

const MODEL = 'claude-test';
const SYSTEM = 'You answer questions about tickets. Use the lookup tool.';
const tools: Tool[] = [
  {
    name: 'lookup',
    description: 'Looks a ticket up',
    input_schema: { type: 'object', properties: { ticket: { type: 'string' } } },
  },
];

/** The size of a request as the window guard measures it. */
const requestTokens = (body: FakeAnthropicRequest) =>
  promptTokens(
    fromAnthropicPrompt({ system: body.system as never, messages: (body.messages ?? []) as MessageParam[] }).map(
      (e) => e.message,
    ),
  );

/** Answers a question with a lookup call (thinking first on even turns) and a tool result with the answer. */
function ticketResponder(server: FakeAnthropicServer): void {
  server.respondWith((body) => {
    const last = body.messages![body.messages!.length - 1]!;
    const blocks = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
    const result = blocks.find((b) => b.type === 'tool_result');
    if (result !== undefined) {
      const turn = Number(/T-1(\d{3})/.exec(JSON.stringify(result.content))![1]);
      return { text: answer(turn) };
    }
    const text = blocks.find((b) => b.type === 'text')?.text as string;
    const turn = Number(/Question (\d+)/.exec(text)![1]);
    return {
      ...(turn % 2 === 0 ? { thinking: `Turn ${turn}: I need the lookup tool.` } : {}),
      text: `Looking up T-${1000 + turn}.`,
      toolUses: [{ id: `toolu_${turn}`, name: 'lookup', input: { ticket: `T-${1000 + turn}` } }],
    };
  });
}

describe('AnthropicSessionMemory through the real @anthropic-ai/sdk client', function () {
  let server: FakeAnthropicServer;
  let rig: AcceptanceRig;
  let client: Anthropic;

  beforeEach(async function () {
    server = await startFakeAnthropicServer({ countTokens: requestTokens });
    rig = acceptanceRig();
    client = new Anthropic({ baseURL: server.url, apiKey: 'test-key', maxRetries: 0 });
  });
  afterEach(async function () {
    await server.close();
    await rig.close();
  });

  const memoryWith = (options: Partial<AnthropicSessionMemoryOptions> = {}) =>
    new AnthropicSessionMemory({
      sessionService: rig.service,
      client,
      model: MODEL,
      maxTokens: 512,
      logger: silent,
      ...options,
    });

  const finalReply = async <T>(stream: AsyncIterable<{ type: string; response?: T }>): Promise<T> => {
    let done: T | undefined;
    for await (const item of stream) if (item.type === 'done') done = item.response;
    return done!;
  };

  it("sends the system prompt separately and the history before the new message, unmarked with cacheBreakpoints 'off'", async function () {
    const memory = memoryWith({ cacheBreakpoints: 'off' });
    server.enqueue({ text: 'Hello!' }, { text: 'Still here.' });
    await memory.call({ sessionId: 's', messages: [{ role: 'user', content: 'hi' }], system: SYSTEM });
    await memory.call({ sessionId: 's', messages: [{ role: 'user', content: 'again' }], system: SYSTEM });
    const body = server.requests[1]!;
    expect(body.system).to.equal(SYSTEM);
    expect(body.max_tokens).to.equal(512);
    expect(body.messages).to.deep.equal([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello!' }] },
      { role: 'user', content: 'again' },
    ]);
  });

  it('runs a tool loop: the tool_use reply is stored, the tool_result request is paired with it', async function () {
    const memory = memoryWith();
    ticketResponder(server);
    const first = await memory.call({
      sessionId: 's',
      messages: [{ role: 'user', content: question(2) }],
      system: SYSTEM,
      tools,
    });
    expect(first.finishReason).to.equal('tool_use');
    const use = first.message.content.find((b) => b.type === 'tool_use')!;
    const second = await memory.call({
      sessionId: 's',
      messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: toolOutput(2) }] }],
      system: SYSTEM,
      tools,
    });
    expect(second.message.content).to.deep.equal([{ type: 'text', text: answer(2), citations: null }]);
    expect(server.rejections).to.deep.equal([]);
    const sent = server.requests[1]!.messages!;
    expect(sent.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user']);
    // The signed thinking block of the tool-use turn went back unchanged, as the API requires.
    expect((sent[1]!.content as Array<{ type: string; signature?: string }>)[0]).to.deep.include({
      type: 'thinking',
      signature: 'sig-1',
    });
    const events = await rig.service.getEvents('s');
    expect(events.map((e) => e.messageType)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
    expect(events[2]!.message).to.deep.equal({
      type: 'tool',
      responses: [{ id: 'toolu_2', name: 'lookup', responseData: toolOutput(2) }],
    });
  });

  it('a streamed turn stores exactly what the same non-streamed turn stores', async function () {
    const memory = memoryWith();
    const reply = {
      thinking: 'Think first.',
      signature: 'same-signature',
      text: 'A longer reply, so that it arrives in several deltas.',
      toolUses: [{ id: 'toolu_same', name: 'lookup', input: { ticket: 'T-1', nested: { list: [1, 2, 3] } } }],
    };
    server.enqueue(reply, reply);
    const plain = await memory.call({ sessionId: 'plain', messages: [{ role: 'user', content: 'q' }], tools });
    const streamed = await finalReply(
      memory.stream({ sessionId: 'streamed', messages: [{ role: 'user', content: 'q' }], tools }),
    );
    const [plainEvents, streamedEvents] = await Promise.all([rig.service.getEvents('plain'), rig.service.getEvents('streamed')]);
    expect(streamedEvents.map((e) => [e.message, e.metadata])).to.deep.equal(plainEvents.map((e) => [e.message, e.metadata]));
    expect(streamed.message.content).to.deep.equal(plain.message.content);
    expect(streamed.usage).to.deep.equal(plain.usage);
  });

  it('calibrates from the prompt tokens Anthropic bills, cached ones included', async function () {
    const memory = memoryWith();
    const ask = { messages: [{ role: 'user' as const, content: 'the same prompt in both sessions' }] };
    server.enqueue(
      { text: 'a', usage: { input_tokens: 40, output_tokens: 1 } },
      { text: 'a', usage: { input_tokens: 4, cache_read_input_tokens: 30, cache_creation_input_tokens: 6, output_tokens: 1 } },
    );
    await memory.call({ sessionId: 'uncached', ...ask });
    await memory.call({ sessionId: 'cached', ...ask });
    const ratio = async (id: string) =>
      ((await rig.service.findById(id))!.metadata[METADATA_TOKEN_CALIBRATION] as TokenCalibration).ratio;
    expect(await ratio('cached')).to.equal(await ratio('uncached'));
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
    server.enqueue({ text: '4711' });
    await memory.call({ sessionId: 's', messages: [{ role: 'user', content: 'What is my locker code?' }] });
    expect(server.rejections).to.deep.equal([]);
    const sent = JSON.stringify(server.requests[0]!.messages);
    expect(sent).to.include('My locker code is 4711.');
  });

  it(`${TURNS} turns with tool calls on SQLite: compacts, every request valid and within the window, nothing lost`, async function () {
    this.timeout(120_000);
    const memory = memoryWith({
      compactionTrigger: rig.trigger,
      compactionStrategy: rig.strategy,
      contextWindowTokens: WINDOW_TOKENS,
    });
    ticketResponder(server);
    const transcript: MessageParam[] = [];
    for (let turn = 1; turn <= TURNS; turn++) {
      const streamed = turn % 5 === 0;
      const ask: MessageParam = { role: 'user', content: question(turn) };
      const first = streamed
        ? await finalReply(memory.stream({ sessionId: 'long', messages: [ask], system: SYSTEM, tools }))
        : await memory.call({ sessionId: 'long', messages: [ask], system: SYSTEM, tools });
      const use = first.message.content.find((b) => b.type === 'tool_use')!;
      const results: MessageParam = {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: use.id, content: toolOutput(turn) }],
      };
      const second = await memory.call({ sessionId: 'long', messages: [results], system: SYSTEM, tools });
      transcript.push(ask, anthropicReplyToParam(first.message), results, anthropicReplyToParam(second.message));
    }

    expect(server.rejections, 'requests the API would have refused').to.deep.equal([]);
    expect(server.requests).to.have.length(2 * TURNS);
    const sizes = server.requests.map(requestTokens);
    expect(Math.max(...sizes)).to.be.at.most(WINDOW_TOKENS);
    expect(rig.compactions()).to.be.at.least(2);

    const all = await rig.service.getEvents('long', EventFilter.all());
    expect(all.filter((e) => e.archived).length).to.be.greaterThan(0);
    // Every message of the conversation is still in the log, archived or not, exactly as it was exchanged.
    expect(toAnthropicMessages(all).messages).to.deep.equal(transcript);
  });
});
