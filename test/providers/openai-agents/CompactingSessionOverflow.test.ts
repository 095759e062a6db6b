import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool, type AgentInputItem } from '@openai/agents';
import { expect } from 'chai';
import { z } from 'zod';
import {
  ContextOverflowError,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  TokenCountCompactionStrategy,
  TokenCountTrigger,
  TurnCountTrigger,
  type Message,
} from 'session-compaction';
import { CompactingSession, itemsOf, type CompactingSessionOptions } from 'session-compaction/openai-agents';
import { startFakeOpenAIServer, type FakeOpenAIServer, type FakeRequestBody } from '../../support/fakeOpenAIServer.js';
import { openAIResponsesContextWindowExceeded } from '../../support/providerRefusals.js';
import { rejection } from '../../support/rejection.js';
import { promptTokens } from '../../chat/support/acceptance.js';
import { silent } from '../../chat/support/harness.js';

setTracingDisabled(true);

const STEPS = 10;
const TASK = 'Read every file and tell me which one sets the retry policy.';
const fileContent = (n: number) => `// file ${n}\n${`export const setting${n} = 'value ${n}'; `.repeat(90)}`;
/** The fake model's own count of a Responses request. */
const providerTokens = (body: FakeRequestBody) =>
  Math.ceil(JSON.stringify([body.instructions ?? '', body.input ?? []]).length / 4);

/** A Responses API request as the library's estimator counts it. */
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

const readFile = tool({
  name: 'read_file',
  description: 'Reads file n',
  parameters: z.object({ n: z.number() }),
  execute: async ({ n }) => fileContent(n),
});

describe('CompactingSession: per-step checks through callModelInputFilter, and overflow recovery', function () {
  let server: FakeOpenAIServer;
  let service: DefaultSessionService;
  let runner: Runner;
  let window = Infinity;
  let refuseAll = false;
  const agent = new Agent({ name: 'reader', instructions: 'Read files with read_file.', model: 'gpt-test', tools: [readFile] });

  beforeEach(async function () {
    window = Infinity;
    refuseAll = false;
    server = await startFakeOpenAIServer({ strict: true });
    server.respondWith((body) => {
      if (refuseAll || providerTokens(body) > window) return openAIResponsesContextWindowExceeded();
      const input = (body.input ?? []) as Array<Record<string, unknown>>;
      const last = input.at(-1)!;
      if (last.type === 'function_call_output') {
        const n = Number(/file (\d+)/.exec(String(last.output))![1]);
        if (n >= STEPS) return { content: 'file 7 sets it.' };
        return {
          content: null,
          toolCalls: [{ id: `call_${n + 1}`, name: 'read_file', arguments: JSON.stringify({ n: n + 1 }) }],
        };
      }
      const text = JSON.stringify(last.content ?? '');
      if (!text.includes('Read every file')) return { content: `noted ${text.slice(1, 20)}` };
      return { content: null, toolCalls: [{ id: 'call_1', name: 'read_file', arguments: JSON.stringify({ n: 1 }) }] };
    });
    service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    runner = new Runner({ modelProvider: new OpenAIProvider({ apiKey: 'k', baseURL: server.url, useResponses: true }) });
  });
  afterEach(async function () {
    await server.close();
  });

  const sessionWith = (options: Partial<CompactingSessionOptions> = {}) =>
    new CompactingSession({
      sessionService: service,
      sessionId: 's',
      logger: silent,
      compactionTrigger: new TurnCountTrigger(1000),
      compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: 700 }),
      ...options,
    });
  const guarded = (session: CompactingSession, input: string | AgentInputItem[]) =>
    session.runWithOverflowRecovery(
      (i) => runner.run(agent, i, { session, callModelInputFilter: session.callModelInputFilter, maxTurns: 20 }),
      input,
    );
  const calls = async () =>
    (await service.getEvents('s', EventFilter.all())).flatMap(itemsOf).filter((i) => 'type' in i && i.type === 'function_call');

  it('without the filter a 10-step run sends prompts past the window; with it every model call stays within', async function () {
    const plain = sessionWith({ sessionId: 'plain', contextWindowTokens: 1800 });
    await runner.run(agent, TASK, { session: plain, maxTurns: 20 });
    expect(Math.max(...server.requests.map(requestTokens))).to.be.greaterThan(1800);

    const before = server.requests.length;
    const session = sessionWith({ contextWindowTokens: 1800, compactionTrigger: new TokenCountTrigger({ threshold: 1400 }) });
    const result = await runner.run(agent, TASK, { session, callModelInputFilter: session.callModelInputFilter, maxTurns: 20 });
    expect(result.finalOutput).to.equal('file 7 sets it.');
    const run = server.requests.slice(before);
    expect(run).to.have.length(STEPS + 1);
    expect(server.rejections).to.deep.equal([]);
    expect(Math.max(...run.map(requestTokens))).to.be.at.most(1800);
    for (const body of run) expect(JSON.stringify(body.input)).to.include('Read every file');
    // The runner stored every item of the run: each call once.
    expect(await calls()).to.have.length(STEPS);
  });

  it('a first prompt refused with the Responses API body: the turn succeeds after exactly one retry, its input stored once', async function () {
    const session = sessionWith();
    for (let i = 0; i < 8; i++) await guarded(session, `remember item ${i}: ${'details '.repeat(60)}`);
    window = Math.floor(providerTokens(server.requests.at(-1)!) * 0.8);
    const before = server.requests.length;

    const result = await guarded(session, 'which items do you remember?');

    expect(result.finalOutput).to.match(/^noted/);
    const turn = server.requests.slice(before);
    expect(turn).to.have.length(2);
    expect(providerTokens(turn[1]!)).to.be.at.most(window);
    const log = await service.getEvents('s', EventFilter.all());
    expect(log.filter((e) => e.text === 'which items do you remember?')).to.have.length(1);
    expect(log.at(-1)!.text).to.match(/^noted/);
  });

  it('a refusal in the middle of a run: the finished steps the runner had not stored are kept, the retry continues', async function () {
    const session = sessionWith();
    window = 3500;
    const result = await guarded(session, TASK);

    expect(result.finalOutput).to.equal('file 7 sets it.');
    expect(server.requests.filter((r) => providerTokens(r) > window)).to.have.length(1);
    expect(server.rejections).to.deep.equal([]);
    const ids = (await calls()).map((c) => (c as { callId: string }).callId);
    expect(ids).to.have.length(STEPS);
    expect(new Set(ids).size).to.equal(STEPS);
    const log = await service.getEvents('s', EventFilter.all());
    expect(log.filter((e) => e.text === TASK)).to.have.length(1);
  });

  it('a model that refuses everything: one ContextOverflowError naming the session, the input stored', async function () {
    const session = sessionWith();
    for (let i = 0; i < 4; i++) await guarded(session, `remember item ${i}`);
    refuseAll = true;
    const before = server.requests.length;
    const error = await rejection(guarded(session, 'anything?'));
    expect(error).to.be.instanceOf(ContextOverflowError);
    expect((error as ContextOverflowError).sessionId).to.equal('s');
    expect(server.requests.length - before).to.equal(2);
    expect((await service.getEvents('s', EventFilter.all())).filter((e) => e.text === 'anything?')).to.have.length(1);
  });

  it('recoverFromOverflow leaves any other error alone', async function () {
    const session = sessionWith();
    expect(await session.recoverFromOverflow(new Error('network down'), 'hi')).to.equal(null);
    expect(await service.getEvents('s')).to.deep.equal([]);
  });

  it('a streamed run refused: recovered the same way when `run` awaits the stream to its end', async function () {
    const session = sessionWith();
    for (let i = 0; i < 8; i++) await guarded(session, `remember item ${i}: ${'details '.repeat(60)}`);
    window = Math.floor(providerTokens(server.requests.at(-1)!) * 0.8);
    const before = server.requests.length;
    const result = await session.runWithOverflowRecovery(async (input) => {
      const streamed = await runner.run(agent, input, {
        session,
        callModelInputFilter: session.callModelInputFilter,
        stream: true,
      });
      for await (const event of streamed) void event;
      await streamed.completed;
      return streamed;
    }, 'which items, streamed?');
    expect(result.finalOutput).to.match(/^noted/);
    expect(server.requests.length - before).to.equal(2);
    const log = await service.getEvents('s', EventFilter.all());
    expect(log.filter((e) => e.text === 'which items, streamed?')).to.have.length(1);
  });
});
