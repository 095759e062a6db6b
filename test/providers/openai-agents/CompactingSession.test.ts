import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool, type AgentInputItem } from '@openai/agents';
import { expect } from 'chai';
import { z } from 'zod';
import {
  Bm25Retriever,
  EventFilter,
  IllegalStateError,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  TurnWindowCompactionStrategy,
  type Message,
} from 'session-compaction';
import { CompactingSession, itemsOf, type CompactingSessionOptions } from 'session-compaction/openai-agents';
import { RECALL_BLOCK_HEADER } from '../../../src/recall/recallBlock.js';
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

setTracingDisabled(true);

/** A Responses API request as the window guard measures it. */
function requestTokens(body: FakeRequestBody): number {
  const messages: Message[] = typeof body.instructions === 'string' ? [Messages.system(body.instructions)] : [];
  for (const item of (body.input ?? []) as Array<Record<string, unknown>>) {
    if (item.type === 'function_call') {
      messages.push(
        Messages.assistant(null, {
          toolCalls: [Messages.toolCall(String(item.call_id), String(item.name), String(item.arguments))],
        }),
      );
    } else if (item.type === 'function_call_output') {
      messages.push(Messages.tool([Messages.toolResponse(String(item.call_id), '', String(item.output))]));
    } else if (item.role === 'user' || item.role === 'assistant') {
      const content = item.content;
      const text =
        typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((c) => c.text ?? '').join('');
      messages.push(item.role === 'user' ? Messages.user(text) : Messages.assistant(text));
    }
  }
  return promptTokens(messages);
}

/** A question gets a lookup call (with a reasoning item on even turns); the tool output gets the answer. */
function ticketResponder(server: FakeOpenAIServer): void {
  server.respondWith((body) => {
    const input = (body.input ?? []) as Array<Record<string, unknown>>;
    const last = input[input.length - 1]!;
    if (last.type === 'function_call_output') {
      return { content: answer(Number(/T-1(\d{3})/.exec(String(last.output))![1])) };
    }
    const turn = Number(/Question (\d+)/.exec(JSON.stringify(last.content))![1]);
    return {
      content: null,
      ...(turn % 2 === 0 ? { reasoning: `turn ${turn}: look it up` } : {}),
      toolCalls: [{ id: `call_${turn}`, name: 'lookup', arguments: JSON.stringify({ ticket: `T-${1000 + turn}` }) }],
    };
  });
}

const lookup = tool({
  name: 'lookup',
  description: 'Looks a ticket up',
  parameters: z.object({ ticket: z.string() }),
  execute: async ({ ticket }) => toolOutput(Number(ticket.slice(2)) - 1000),
});

/** Records what the runner hands to addItems, to compare with the log afterwards. */
class RecordingSession extends CompactingSession {
  readonly added: AgentInputItem[] = [];
  override async addItems(items: AgentInputItem[]): Promise<void> {
    this.added.push(...structuredClone(items));
    return super.addItems(items);
  }
}

describe('CompactingSession through the real @openai/agents runner (Responses API)', function () {
  let server: FakeOpenAIServer;
  let rig: AcceptanceRig;
  let runner: Runner;
  const agent = new Agent({
    name: 'tickets',
    instructions: 'Answer ticket questions with the lookup tool.',
    model: 'gpt-test',
    tools: [lookup],
  });

  beforeEach(async function () {
    server = await startFakeOpenAIServer({ strict: true });
    rig = acceptanceRig();
    runner = new Runner({ modelProvider: new OpenAIProvider({ apiKey: 'test-key', baseURL: server.url, useResponses: true }) });
  });
  afterEach(async function () {
    await server.close();
    await rig.close();
  });

  const sessionWith = (options: Partial<CompactingSessionOptions> = {}) =>
    new RecordingSession({ sessionService: rig.service, sessionId: 's', logger: silent, ...options });
  const itemsInLog = async (id = 's') => (await rig.service.getEvents(id, EventFilter.all())).flatMap(itemsOf);

  it('stores every item of a run — reasoning, the call, its output, the answer — and replays them next turn', async function () {
    const session = sessionWith();
    ticketResponder(server);
    const first = await runner.run(agent, question(2), { session });
    expect(first.finalOutput).to.equal(answer(2));
    const types = (await session.getItems()).map((i) => ('role' in i ? i.role : i.type));
    expect(types).to.deep.equal(['user', 'reasoning', 'function_call', 'function_call_result', 'assistant']);
    await runner.run(agent, question(3), { session });
    // The second turn's first request starts with the first turn exactly as it was stored.
    const replay = (server.requests[2]!.input as Array<Record<string, unknown>>).slice(0, 5);
    expect(replay.map((i) => i.type ?? i.role)).to.deep.equal([
      'user',
      'reasoning',
      'function_call',
      'function_call_output',
      'message',
    ]);
    expect(replay[1]).to.deep.include({ encrypted_content: 'enc:' + Buffer.from('turn 2: look it up').toString('base64') });
    expect(server.rejections).to.deep.equal([]);
  });

  it('a streamed turn stores exactly what the same non-streamed turn stores', async function () {
    ticketResponder(server);
    await runner.run(agent, question(4), { session: sessionWith({ sessionId: 'plain' }) });
    const streamed = await runner.run(agent, question(4), { session: sessionWith({ sessionId: 'streamed' }), stream: true });
    for await (const _event of streamed) {
      // drain
    }
    await streamed.completed;
    const [a, b] = await Promise.all([rig.service.getEvents('plain'), rig.service.getEvents('streamed')]);
    expect(b.map((e) => [e.message, e.metadata])).to.deep.equal(a.map((e) => [e.message, e.metadata]));
  });

  it('popItem archives the most recent item: gone from getItems, still in the log', async function () {
    const session = sessionWith();
    await session.addItems([
      { role: 'user', content: 'keep me' },
      { role: 'user', content: 'undo me' },
    ]);
    expect(await session.popItem()).to.deep.equal({ role: 'user', content: 'undo me' });
    expect(await session.getItems()).to.deep.equal([{ role: 'user', content: 'keep me' }]);
    // Archived events precede the active window in the log (the repository contract), so the popped item moves first.
    expect(await itemsInLog()).to.deep.equal([
      { role: 'user', content: 'undo me' },
      { role: 'user', content: 'keep me' },
    ]);
    expect(await session.popItem()).to.deep.equal({ role: 'user', content: 'keep me' });
    expect(await session.popItem()).to.equal(undefined);
  });

  it("clearSession archives everything by default, and deletes the session with onClear: 'delete'", async function () {
    const archiving = sessionWith();
    await archiving.addItems([{ role: 'user', content: 'a' }]);
    await archiving.clearSession();
    expect(await archiving.getItems()).to.deep.equal([]);
    expect(await itemsInLog()).to.have.length(1);

    const deleting = sessionWith({ sessionId: 'gone', onClear: 'delete' });
    await deleting.addItems([{ role: 'user', content: 'b' }]);
    await deleting.clearSession();
    expect(await rig.service.findById('gone')).to.equal(null);
    expect(await deleting.getItems()).to.deep.equal([]);
  });

  it('getItems(limit) gives the most recent `limit` items as stored, like MemorySession', async function () {
    const session = sessionWith();
    const items: AgentInputItem[] = [
      { role: 'user', content: 'q' },
      { type: 'function_call', callId: 'c1', name: 'f', arguments: '{}' },
      { type: 'function_call_result', callId: 'c1', name: 'f', status: 'completed', output: 'r' },
      { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'a' }] },
    ];
    await session.addItems(items);
    expect(await session.getItems(2)).to.deep.equal(items.slice(2));
    expect(await session.getItems(3)).to.deep.equal(items.slice(1));
    expect(await session.getItems(0)).to.deep.equal([]);
    expect(await session.getItems(10)).to.deep.equal(items);
  });

  it('refuses a session owned by another user, and works on any repository', async function () {
    await sessionWith({ userId: 'alice' }).addItems([{ role: 'user', content: 'mine' }]);
    await expectRejects(sessionWith({ userId: 'mallory' }).getItems(), IllegalStateError, 'does not belong');
    const onMemory = new CompactingSession({ repository: new InMemorySessionRepository(), sessionId: 'm', logger: silent });
    await onMemory.addItems([{ role: 'user', content: 'x' }]);
    expect(await onMemory.getItems()).to.deep.equal([{ role: 'user', content: 'x' }]);
  });

  it(`${TURNS} turns with tool calls through the runner on SQLite: compacts, every request valid and within the window, nothing lost`, async function () {
    this.timeout(180_000);
    const session = sessionWith({
      compactionTrigger: rig.trigger,
      compactionStrategy: rig.strategy,
      contextWindowTokens: WINDOW_TOKENS,
    });
    ticketResponder(server);
    for (let turn = 1; turn <= TURNS; turn++) {
      if (turn % 5 === 0) {
        const streamed = await runner.run(agent, question(turn), { session, stream: true });
        for await (const _event of streamed) {
          // drain
        }
        await streamed.completed;
        expect(streamed.finalOutput).to.equal(answer(turn));
      } else {
        expect((await runner.run(agent, question(turn), { session })).finalOutput).to.equal(answer(turn));
      }
    }
    expect(server.rejections, 'requests the API would have refused').to.deep.equal([]);
    expect(server.requests).to.have.length(2 * TURNS);
    expect(Math.max(...server.requests.map(requestTokens))).to.be.at.most(WINDOW_TOKENS);
    expect(rig.compactions()).to.be.at.least(2);
    expect((await rig.service.getEvents('s', EventFilter.all())).some((e) => e.archived)).to.equal(true);
    expect(await itemsInLog()).to.deep.equal(session.added);
  });

  describe('with recall', function () {
    /** A fact said once, then archived by compaction: only recall can bring it back. */
    async function archivedFact(session: CompactingSession): Promise<void> {
      server.enqueue({ content: 'Noted.' });
      await runner.run(agent, 'My locker code is 4711.', { session });
      for (let i = 0; i < 3; i++) {
        server.enqueue({ content: 'Sure.' });
        await runner.run(agent, `Small talk ${i}`, { session });
      }
      await rig.service.compact('s', () => true, new TurnWindowCompactionStrategy({ maxTurns: 1 }));
      const active = await rig.service.getEvents('s', EventFilter.active());
      expect(active.map((e) => e.text)).to.not.include('My locker code is 4711.');
    }
    const inputText = (n: number) => JSON.stringify(server.requests[n]!.input);

    it('getItems quotes the archived events that match the latest user item, placed right before the new input', async function () {
      const session = sessionWith({ recall: { retriever: new Bm25Retriever({ sessionService: rig.service }) } });
      await archivedFact(session);
      // The runner reads the session before it stores the new input: the question goes in first.
      await session.addItems([{ role: 'user', content: 'What is my locker code?' }]);
      server.enqueue({ content: '4711' });
      await runner.run(agent, [], { session });
      const input = server.requests.at(-1)!.input as Array<Record<string, unknown>>;
      expect(inputText(server.requests.length - 1)).to.include('My locker code is 4711.');
      // Block, then the question it was recalled for: the stored history before them is an unchanged prefix.
      expect(JSON.stringify(input.at(-2))).to.include('My locker code is 4711.');
      expect(input.at(-1)).to.deep.include({ role: 'user', content: 'What is my locker code?' });
      expect(server.rejections).to.deep.equal([]);
    });

    it('the recall block reaches the model through the runner but is never stored', async function () {
      const session = sessionWith({ recall: { retriever: new Bm25Retriever({ sessionService: rig.service }) } });
      await archivedFact(session);
      server.enqueue({ content: 'It is 4711.' });
      // The latest stored user item is "Small talk 2": recall runs for it; the new question follows.
      await runner.run(agent, 'Tell me about the small talk and my locker code.', { session });
      expect(inputText(server.requests.length - 1)).to.include('Small talk 0');
      const log = await rig.service.getEvents('s', EventFilter.all());
      expect(log.filter((e) => (e.text ?? '').includes(RECALL_BLOCK_HEADER))).to.deep.equal([]);
      expect(await itemsInLog()).to.deep.equal(session.added);
      expect(server.rejections).to.deep.equal([]);
    });

    it("placement 'after-system' puts the block first; limit does not count it", async function () {
      const session = sessionWith({
        recall: { retriever: new Bm25Retriever({ sessionService: rig.service }), placement: 'after-system' },
      });
      await archivedFact(session);
      await session.addItems([{ role: 'user', content: 'What is my locker code?' }]);
      const items = await session.getItems();
      expect(JSON.stringify(items[0])).to.include('My locker code is 4711.');
      const limited = await session.getItems(1);
      expect(limited).to.have.length(2);
      expect(limited[1]).to.deep.include({ role: 'user', content: 'What is my locker code?' });
    });

    it('refuses a recall option without a retriever', function () {
      expect(() => sessionWith({ recall: {} as never })).to.throw(InvalidArgumentError, 'recall.retriever');
    });
  });
});
