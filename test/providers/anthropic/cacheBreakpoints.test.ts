import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { expect } from 'chai';
import sinon from 'sinon';
import {
  Bm25Retriever,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  SessionEvent,
  TurnWindowCompactionStrategy,
} from 'session-compaction';
import {
  AnthropicChatProvider,
  AnthropicSessionMemory,
  type AnthropicSessionMemoryOptions,
  fromAnthropicMessage,
} from 'session-compaction/anthropic';
import {
  cacheBreakpointCount,
  startFakeAnthropicServer,
  type FakeAnthropicBlock,
  type FakeAnthropicRequest,
  type FakeAnthropicServer,
} from '../../support/fakeAnthropicServer.js';
import { silent } from '../../chat/support/harness.js';

const SYSTEM = 'You answer questions about lockers.';
const EPHEMERAL = { type: 'ephemeral' };

const blocksOf = (content: string | FakeAnthropicBlock[]): FakeAnthropicBlock[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : content;

/** Every block of a request's messages in order, with where it is. */
function flatBlocks(body: FakeAnthropicRequest): Array<{ message: number; block: number; value: FakeAnthropicBlock }> {
  return (body.messages ?? []).flatMap((m, message) => blocksOf(m.content).map((value, block) => ({ message, block, value })));
}

/** Positions of the message blocks that carry cache_control. */
function messageBreakpoints(body: FakeAnthropicRequest): Array<[number, number]> {
  return flatBlocks(body)
    .filter((b) => b.value.cache_control !== undefined)
    .map((b) => [b.message, b.block]);
}

/**
 * What the cache hashes up to a message block: system, then the messages up to and including that block.
 * A string content is the API's shorthand for one text block, and where a breakpoint sits does not change
 * the prefix, so both are normalised away.
 */
function prefixUpTo(body: FakeAnthropicRequest, message: number, block: number): string {
  const unmarked = (b: FakeAnthropicBlock) => {
    const { cache_control: _ignored, ...rest } = b;
    return rest;
  };
  const system = body.system === undefined ? [] : blocksOf(body.system).map(unmarked);
  const messages = (body.messages ?? []).slice(0, message + 1).map((m, i) => ({
    role: m.role,
    content: blocksOf(m.content)
      .slice(0, i === message ? block + 1 : undefined)
      .map(unmarked),
  }));
  return JSON.stringify({ tools: body.tools ?? [], system, messages });
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

describe('AnthropicSessionMemory prompt-cache breakpoints', function () {
  let server: FakeAnthropicServer;
  let service: DefaultSessionService;
  let client: Anthropic;

  beforeEach(async function () {
    server = await startFakeAnthropicServer();
    service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    client = new Anthropic({ baseURL: server.url, apiKey: 'test-key', maxRetries: 0 });
  });
  afterEach(async function () {
    await server.close();
  });

  const memoryWith = (options: Partial<AnthropicSessionMemoryOptions> = {}) =>
    new AnthropicSessionMemory({
      sessionService: service,
      client,
      model: 'claude-test',
      maxTokens: 256,
      logger: silent,
      ...options,
    });

  const withRecall = (placement?: 'before-last-user' | 'after-system') =>
    memoryWith({
      recall: { retriever: new Bm25Retriever({ sessionService: service }), ...(placement ? { placement } : {}) },
    });

  /** A session whose locker code is archived (only recall brings it back); the active window is the last turn. */
  async function sessionWithArchivedFact(): Promise<void> {
    await service.create({ id: 's', userId: 'u' });
    await service.appendMessage('s', Messages.user('My locker code is 4711.'));
    await service.appendMessage('s', Messages.assistant('Noted.'));
    for (let i = 0; i < 3; i++) {
      await service.appendMessage('s', Messages.user(`Small talk ${i}`));
      await service.appendMessage('s', Messages.assistant('Sure.'));
    }
    await service.compact('s', () => true, new TurnWindowCompactionStrategy({ maxTurns: 1 }));
  }

  it('without recall marks the system prompt and the last block of the prompt, strings turned into text blocks', async function () {
    const memory = memoryWith();
    server.enqueue({ text: 'Hello!' }, { text: 'Still here.' });
    await memory.call({ sessionId: 's', messages: [{ role: 'user', content: 'hi' }], system: SYSTEM });
    await memory.call({ sessionId: 's', messages: [{ role: 'user', content: 'again' }], system: SYSTEM });
    expect(server.rejections).to.deep.equal([]);
    const [first, second] = server.requests;
    expect(first!.system).to.deep.equal([{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }]);
    expect(first!.messages).to.deep.equal([{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: EPHEMERAL }] }]);
    expect(second!.system).to.deep.equal([{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }]);
    expect(second!.messages).to.deep.equal([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello!' }] },
      { role: 'user', content: [{ type: 'text', text: 'again', cache_control: EPHEMERAL }] },
    ]);
  });

  it('with recall before the last user message marks the last history block, never the recall block or the new message', async function () {
    await sessionWithArchivedFact();
    server.enqueue({ text: '4711' });
    await withRecall().call({ sessionId: 's', messages: [{ role: 'user', content: 'What is my locker code?' }], system: SYSTEM });
    expect(server.rejections).to.deep.equal([]);
    const body = server.requests[0]!;
    expect(body.system).to.deep.equal([{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }]);
    const messages = body.messages!;
    expect(messages.slice(0, 2)).to.deep.equal([
      { role: 'user', content: 'Small talk 2' },
      { role: 'assistant', content: [{ type: 'text', text: 'Sure.', cache_control: EPHEMERAL }] },
    ]);
    // The recall block and the question were combined into the last user message, which stays unmarked.
    expect(messages).to.have.length(3);
    expect(JSON.stringify(messages[2])).to.include('My locker code is 4711.').and.include('What is my locker code?');
    expect(messageBreakpoints(body)).to.deep.equal([[1, 0]]);
  });

  it("with recall placed 'after-system' marks only the system prompt", async function () {
    await sessionWithArchivedFact();
    server.enqueue({ text: '4711' });
    await withRecall('after-system').call({
      sessionId: 's',
      messages: [{ role: 'user', content: 'What is my locker code?' }],
      system: SYSTEM,
    });
    expect(server.rejections).to.deep.equal([]);
    const body = server.requests[0]!;
    expect(JSON.stringify(body.messages![0])).to.include('My locker code is 4711.');
    expect(messageBreakpoints(body)).to.deep.equal([]);
    expect(body.system).to.deep.equal([{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }]);
  });

  it("with cacheBreakpoints 'off' adds no cache_control anywhere, recall or not", async function () {
    await sessionWithArchivedFact();
    server.enqueue({ text: '4711' }, { text: 'Yes.' });
    const off = (recall: boolean) =>
      memoryWith({
        cacheBreakpoints: 'off',
        ...(recall ? { recall: { retriever: new Bm25Retriever({ sessionService: service }) } } : {}),
      });
    await off(true).call({ sessionId: 's', messages: [{ role: 'user', content: 'What is my locker code?' }], system: SYSTEM });
    await off(false).call({ sessionId: 's', messages: [{ role: 'user', content: 'Thanks' }], system: SYSTEM });
    for (const body of server.requests) {
      expect(body.system).to.equal(SYSTEM);
      expect(cacheBreakpointCount(body)).to.equal(0);
    }
  });

  it('refuses a cacheBreakpoints value other than auto or off', function () {
    expect(() => memoryWith({ cacheBreakpoints: 'on' as never })).to.throw("cacheBreakpoints must be 'auto' or 'off'");
  });

  describe('the limit of 4 breakpoints per request', function () {
    const tool = (name: string, marked: boolean): Tool => ({
      name,
      input_schema: { type: 'object' },
      ...(marked ? { cache_control: { type: 'ephemeral' as const } } : {}),
    });

    it("with 3 of the caller's (tools and system) adds only the history end, not the system's last block", async function () {
      const memory = memoryWith();
      server.enqueue({ text: 'a' }, { text: 'b' });
      const system: TextBlockParam[] = [
        { type: 'text', text: 'Rules.', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Today is Monday.' },
      ];
      const tools = [tool('one', true), tool('two', true), tool('three', false)];
      await memory.call({ sessionId: 's', messages: [{ role: 'user', content: 'hi' }], system, tools });
      await memory.call({ sessionId: 's', messages: [{ role: 'user', content: 'again' }], system, tools });
      expect(server.rejections).to.deep.equal([]);
      const body = server.requests[1]!;
      expect(cacheBreakpointCount(body)).to.equal(4);
      expect(messageBreakpoints(body)).to.deep.equal([[2, 0]]);
      expect(body.system).to.deep.equal(system);
    });

    it("with 4 of the caller's (top-level cache_control and tools) adds none", async function () {
      const memory = memoryWith();
      server.enqueue({ text: 'a' });
      await memory.call({
        sessionId: 's',
        messages: [{ role: 'user', content: 'hi' }],
        system: SYSTEM,
        tools: [tool('one', true), tool('two', true), tool('three', true)],
        cache_control: { type: 'ephemeral' },
      });
      expect(server.rejections).to.deep.equal([]);
      const body = server.requests[0]!;
      expect(cacheBreakpointCount(body)).to.equal(4);
      expect(body.system).to.equal(SYSTEM);
      expect(body.messages).to.deep.equal([{ role: 'user', content: 'hi' }]);
    });

    it("a caller's breakpoint already on the last block is not doubled", async function () {
      const memory = memoryWith();
      server.enqueue({ text: 'a' });
      const messages: MessageParam[] = [
        { role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] },
      ];
      await memory.call({ sessionId: 's', messages, system: SYSTEM });
      const body = server.requests[0]!;
      expect(body.messages).to.deep.equal(messages);
      expect(cacheBreakpointCount(body)).to.equal(2);
    });
  });

  it("never changes the caller's request objects nor the stored events", async function () {
    await sessionWithArchivedFact();
    server.enqueue({ text: '4711' }, { text: 'Yes, 4711.' });
    const system = deepFreeze<TextBlockParam[]>([{ type: 'text', text: SYSTEM }]);
    const tools = deepFreeze<Tool[]>([{ name: 'lookup', input_schema: { type: 'object' } }]);
    const ask = (text: string) => deepFreeze<MessageParam[]>([{ role: 'user', content: [{ type: 'text', text }] }]);
    const first = ask('What is my locker code?');
    const second = ask('Is the locker code still 4711?');
    const copies = structuredClone({ system, tools, first, second });
    // Frozen: a write to any of them would throw (ES modules are strict). With recall the history is marked;
    // without, the caller's own last message is.
    await withRecall().call({ sessionId: 's', messages: first, system, tools });
    await memoryWith().call({ sessionId: 's', messages: second, system, tools });
    expect(server.rejections).to.deep.equal([]);
    expect({ system, tools, first, second }).to.deep.equal(copies);
    // Both requests marked something, and none of it reached the log.
    expect(server.requests.map((b) => cacheBreakpointCount(b))).to.deep.equal([2, 2]);
    expect(messageBreakpoints(server.requests[1]!)).to.deep.equal([[server.requests[1]!.messages!.length - 1, 0]]);
    expect(JSON.stringify(await service.getEvents('s', EventFilter.all()))).to.not.include('cache_control');
  });

  for (const recall of [true, false]) {
    it(`${recall ? 'with' : 'without'} recall, the next turn repeats the prefix up to the breakpoint exactly, within the 20-block lookback`, async function () {
      await sessionWithArchivedFact();
      const memory = recall ? withRecall() : memoryWith();
      server.enqueue({ text: 'It is 4711.' }, { text: 'Yes, still 4711.' });
      await memory.call({ sessionId: 's', messages: [{ role: 'user', content: 'What is my locker code?' }], system: SYSTEM });
      await memory.call({
        sessionId: 's',
        messages: [{ role: 'user', content: 'Is my locker code still the same?' }],
        system: SYSTEM,
      });
      expect(server.rejections).to.deep.equal([]);
      const [first, second] = server.requests;
      if (recall)
        for (const body of [first!, second!]) expect(JSON.stringify(body.messages)).to.include('My locker code is 4711.');
      const [end1] = messageBreakpoints(first!);
      const [end2] = messageBreakpoints(second!);
      expect(end1).to.not.equal(undefined);
      expect(end2).to.not.equal(undefined);
      // The second request holds the first one's cached prefix unchanged: the cache entry is read, not rewritten.
      expect(prefixUpTo(second!, ...end1!)).to.equal(prefixUpTo(first!, ...end1!));
      const at = (body: FakeAnthropicRequest, [m, b]: [number, number]) =>
        flatBlocks(body).findIndex((x) => x.message === m && x.block === b);
      const distance = at(second!, end2!) - at(second!, end1!);
      expect(distance).to.be.greaterThan(0).and.at.most(20);
    });
  }

  it('puts the breakpoint on the tool result when the recall block is combined into the same user message', function () {
    const provider = new AnthropicChatProvider(client);
    const event = (message: Parameters<typeof SessionEvent.create>[0]['message'], metadata = {}) =>
      SessionEvent.create({ sessionId: 's', message, metadata });
    const history = [
      event(Messages.user('Look T-1 up')),
      event(Messages.assistant(null, { toolCalls: [Messages.toolCall('toolu_1', 'lookup', '{"ticket":"T-1"}')] })),
      event(Messages.tool([Messages.toolResponse('toolu_1', 'lookup', 'T-1 is open')])),
      event(Messages.user('Recalled: T-0 was closed.'), { recall: true }),
    ];
    const prompt = provider.prompt(history, [{ role: 'user', content: 'And T-0?' }], {});
    expect(prompt.messages[2]).to.deep.equal({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'T-1 is open', cache_control: EPHEMERAL },
        { type: 'text', text: 'Recalled: T-0 was closed.' },
        { type: 'text', text: 'And T-0?' },
      ],
    });
    expect(cacheBreakpointCount(prompt as FakeAnthropicRequest)).to.equal(1);
  });
  describe('breakpoints stored with the history', function () {
    /** A caller who marks its own new message every turn, as Anthropic's docs suggest, for six turns. */
    async function sixMarkedTurns(cacheBreakpoints: 'auto' | 'off', extra: Partial<AnthropicSessionMemoryOptions> = {}) {
      const memory = memoryWith({ cacheBreakpoints, ...extra });
      for (let turn = 1; turn <= 6; turn++) {
        server.enqueue({ text: `Answer ${turn}.` });
        await memory.call({
          sessionId: 's',
          messages: [
            { role: 'user', content: [{ type: 'text', text: `Question ${turn}?`, cache_control: { type: 'ephemeral' } }] },
          ],
          system: SYSTEM,
        });
      }
    }

    /** The texts of the message blocks a request marked, in order. */
    const markedTexts = (body: FakeAnthropicRequest) =>
      flatBlocks(body)
        .filter((b) => b.value.cache_control !== undefined)
        .map((b) => b.value.text);

    it("with 'auto', six turns of a caller marking each new message all succeed: only the new message and the system prompt are marked", async function () {
      await sixMarkedTurns('auto');
      expect(server.rejections).to.deep.equal([]);
      expect(server.requests).to.have.length(6);
      for (const [i, body] of server.requests.entries()) {
        // The new message is the prompt's last block, so it is the history end as well: nothing else is marked.
        expect(markedTexts(body)).to.deep.equal([`Question ${i + 1}?`]);
        expect(body.system).to.deep.equal([{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }]);
        expect(cacheBreakpointCount(body)).to.equal(2);
      }
      // The log still has every caller's breakpoint, exactly as sent.
      const stored = (await service.getEvents('s', EventFilter.all())).filter((e) => e.messageType === 'user');
      expect(stored).to.have.length(6);
      for (const e of stored) expect(JSON.stringify(e.metadata)).to.include('cache_control');
    });

    it("with 'off', six turns of a caller marking each new message all succeed: the oldest stored breakpoints are left out from the 5th turn", async function () {
      await sixMarkedTurns('off');
      expect(server.rejections).to.deep.equal([]);
      expect(server.requests.map(markedTexts)).to.deep.equal([
        ['Question 1?'],
        ['Question 1?', 'Question 2?'],
        ['Question 1?', 'Question 2?', 'Question 3?'],
        ['Question 1?', 'Question 2?', 'Question 3?', 'Question 4?'],
        ['Question 2?', 'Question 3?', 'Question 4?', 'Question 5?'],
        ['Question 3?', 'Question 4?', 'Question 5?', 'Question 6?'],
      ]);
      for (const body of server.requests) expect(body.system).to.equal(SYSTEM);
    });

    it("with 'off', the request's own tools and system breakpoints win over stored ones, and the drop is logged at debug only", async function () {
      const logger = { error: sinon.spy(), warn: sinon.spy(), info: sinon.spy(), debug: sinon.spy() };
      const memory = memoryWith({ cacheBreakpoints: 'off', logger });
      const system: TextBlockParam[] = [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }];
      const tools: Tool[] = [{ name: 'lookup', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } }];
      for (let turn = 1; turn <= 4; turn++) {
        server.enqueue({ text: `Answer ${turn}.` });
        await memory.call({
          sessionId: 's',
          messages: [
            { role: 'user', content: [{ type: 'text', text: `Question ${turn}?`, cache_control: { type: 'ephemeral' } }] },
          ],
          system,
          tools,
        });
      }
      expect(server.rejections).to.deep.equal([]);
      // Own: tool, system, new message (3); room for one stored, the newest.
      expect(server.requests.map(markedTexts)).to.deep.equal([
        ['Question 1?'],
        ['Question 1?', 'Question 2?'],
        ['Question 2?', 'Question 3?'],
        ['Question 3?', 'Question 4?'],
      ]);
      expect(server.requests.map((b) => cacheBreakpointCount(b))).to.deep.equal([3, 4, 4, 4]);
      expect(logger.debug.callCount).to.equal(2);
      expect(logger.debug.lastCall.args[1]).to.deep.equal({ stored: 3, dropped: 2, own: 3 });
      expect(logger.warn.called || logger.info.called || logger.error.called).to.equal(false);
    });

    describe('AnthropicChatProvider.prompt', function () {
      const mark = { type: 'ephemeral' as const };
      const event = (param: MessageParam | { role: 'system'; content: TextBlockParam[] }) =>
        fromAnthropicMessage(param as MessageParam, { resolveToolName: () => 'lookup' }).map(({ message, metadata }) =>
          SessionEvent.create({ sessionId: 's', message, ...(metadata ? { metadata } : {}) }),
        );
      /** A stored history with 5 breakpoints: system, a user text, an assistant text, a nested tool result block, a user text. */
      const history = () => [
        ...event({ role: 'system', content: [{ type: 'text', text: 'Stored system.', cache_control: mark }] }),
        ...event({ role: 'user', content: [{ type: 'text', text: 'one', cache_control: mark }] }),
        ...event({
          role: 'assistant',
          content: [
            { type: 'text', text: 'two', cache_control: mark },
            { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} },
          ],
        }),
        ...event({
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'three', cache_control: mark }] },
          ],
        }),
        ...event({ role: 'assistant', content: 'four' }),
        ...event({ role: 'user', content: [{ type: 'text', text: 'five', cache_control: mark }] }),
        ...event({ role: 'assistant', content: 'six' }),
      ];
      const ask: MessageParam[] = [{ role: 'user', content: [{ type: 'text', text: 'seven', cache_control: mark }] }];
      /** Texts of every marked block, nested ones too, system first. */
      const markedIn = (prompt: unknown): string[] => {
        const out: string[] = [];
        const walk = (value: unknown): void => {
          if (Array.isArray(value)) return value.forEach(walk);
          if (value === null || typeof value !== 'object') return;
          const v = value as Record<string, unknown>;
          if (v.cache_control !== undefined && v.cache_control !== null) out.push(String(v.text ?? v.type));
          walk(v.content);
        };
        const { system, messages } = prompt as { system?: unknown; messages: unknown };
        walk(system);
        walk(messages);
        return out;
      };

      it("'auto' sends none of the stored breakpoints, nested ones included, and keeps the request's own", function () {
        const prompt = new AnthropicChatProvider(client).prompt(history(), ask, { system: 'Be brief.' });
        // The new message is the history end (already marked); the system's last block gets the library's.
        expect(markedIn(prompt)).to.deep.equal(['Be brief.', 'seven']);
      });

      it("'off' keeps the newest stored breakpoints that fit after the request's own, oldest left out first", function () {
        const provider = new AnthropicChatProvider(client, { cacheBreakpoints: 'off' });
        expect(markedIn(provider.prompt(history(), ask, {}))).to.deep.equal(['two', 'three', 'five', 'seven']);
        expect(markedIn(provider.prompt(history(), [{ role: 'user', content: 'seven' }], {}))).to.deep.equal([
          'one',
          'two',
          'three',
          'five',
        ]);
        // Four of the request's own: every stored one goes.
        const full = provider.prompt(history(), ask, {
          system: [{ type: 'text', text: 'Be brief.', cache_control: mark }],
          tools: [{ name: 'lookup', input_schema: { type: 'object' }, cache_control: mark }],
          cache_control: mark,
        });
        expect(markedIn(full)).to.deep.equal(['Be brief.', 'seven']);
      });

      it("'off' sends every stored breakpoint when they fit", function () {
        const short = history().slice(0, 3);
        const prompt = new AnthropicChatProvider(client, { cacheBreakpoints: 'off' }).prompt(short, ask, {});
        expect(markedIn(prompt)).to.deep.equal(['Stored system.', 'one', 'two', 'seven']);
      });

      it('a stale stored form (the message rewritten by a strategy) is not rendered, so its breakpoints do not count', function () {
        const events = history();
        // Masking the tool result leaves its native form stale: the masked text is sent, unmarked.
        events[3] = events[3]!.with({ message: Messages.tool([Messages.toolResponse('toolu_1', 'lookup', '[masked]')]) });
        const prompt = new AnthropicChatProvider(client, { cacheBreakpoints: 'off' }).prompt(events, ask, {});
        expect(markedIn(prompt)).to.deep.equal(['one', 'two', 'five', 'seven']);
      });

      it('never changes the stored events', function () {
        const events = history();
        const before = JSON.stringify(events);
        for (const mode of ['auto', 'off'] as const)
          new AnthropicChatProvider(client, { cacheBreakpoints: mode }).prompt(events, ask, {});
        expect(JSON.stringify(events)).to.equal(before);
      });
    });
  });
});
