import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { expect } from 'chai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import {
  ContextOverflowError,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  TokenCountCompactionStrategy,
  TokenCountTrigger,
  TurnCountTrigger,
  fromOpenAIMessage,
} from 'session-compaction';
import { AiSdkSessionMemory, type AiSdkSessionMemoryOptions } from 'session-compaction/ai-sdk';
import { startFakeOpenAIServer, type FakeOpenAIServer, type FakeRequestBody } from '../../support/fakeOpenAIServer.js';
import { anthropicPromptTooLongBody, openAIContextLengthExceeded } from '../../support/providerRefusals.js';
import { rejection } from '../../support/rejection.js';
import { promptTokens } from '../../chat/support/acceptance.js';
import { silent } from '../../chat/support/harness.js';

const STEPS = 12;
const TASK = 'Read every file and tell me which one sets the retry policy.';
const fileContent = (n: number) => `// file ${n}\n${`export const setting${n} = 'value ${n}'; `.repeat(90)}`;
const providerTokens = (body: FakeRequestBody) => Math.ceil(JSON.stringify(body.messages ?? []).length / 4);
const requestTokens = (body: FakeRequestBody) =>
  promptTokens((body.messages ?? []).map((m) => fromOpenAIMessage(m as ChatCompletionMessageParam)));

const readFile = tool({
  description: 'Reads file n',
  inputSchema: jsonSchema<{ n: number }>({ type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }),
  execute: async ({ n }) => fileContent(n),
});

describe('AiSdkSessionMemory: per-step checks through prepareStep, and overflow recovery', function () {
  let server: FakeOpenAIServer;
  let service: DefaultSessionService;
  let model: ReturnType<ReturnType<typeof createOpenAI>['chat']>;
  /** The fake model's window in its own count; refusals are OpenAI's documented body. */
  let window = Infinity;
  let refuseAll = false;

  beforeEach(async function () {
    window = Infinity;
    refuseAll = false;
    server = await startFakeOpenAIServer({ strict: true });
    server.respondWith((body) => {
      const tokens = providerTokens(body);
      if (refuseAll || tokens > window) return openAIContextLengthExceeded(Number.isFinite(window) ? window : 1000, tokens);
      const last = body.messages!.at(-1)!;
      const n = last.role === 'tool' ? Number(/file (\d+)/.exec(String(last.content))![1]) : 0;
      if (last.role === 'user' && last.content !== TASK) return { content: `noted: ${String(last.content).slice(0, 20)}` };
      if (n >= STEPS) return { content: 'file 7 sets it.' };
      return { content: null, toolCalls: [{ id: `call_${n + 1}`, name: 'read_file', arguments: JSON.stringify({ n: n + 1 }) }] };
    });
    service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    model = createOpenAI({ baseURL: server.url, apiKey: 'k' }).chat('gpt-test');
  });
  afterEach(async function () {
    await server.close();
  });

  const memoryWith = (options: Partial<AiSdkSessionMemoryOptions> = {}) =>
    new AiSdkSessionMemory({
      sessionService: service,
      logger: silent,
      compactionTrigger: new TokenCountTrigger({ threshold: 1400 }),
      compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: 700 }),
      ...options,
    });

  const runTask = (memory: AiSdkSessionMemory, sessionId = 'run', text = TASK) =>
    memory.generateText({ sessionId, messages: [{ role: 'user', content: text }] }, (prompt) =>
      generateText({ model, tools: { read_file: readFile }, stopWhen: stepCountIs(STEPS + 2), maxRetries: 0, ...prompt }),
    );

  it('without per-step checks a 12-step run inside one turn sends prompts past the window', async function () {
    await runTask(memoryWith({ compaction: { everyStep: false } }));
    expect(Math.max(...server.requests.map(requestTokens))).to.be.greaterThan(1800);
  });

  it('prepareStep stores each finished step and compacts inside the run: every step within the window, nothing lost', async function () {
    let compactions = 0;
    service.events.on('compactionCompleted', () => compactions++);
    const result = await runTask(memoryWith());

    expect(result.text).to.equal('file 7 sets it.');
    expect(server.requests).to.have.length(STEPS + 1);
    expect(server.rejections).to.deep.equal([]);
    expect(Math.max(...server.requests.map(requestTokens))).to.be.at.most(1800);
    expect(compactions).to.be.greaterThan(1);
    for (const body of server.requests) expect(body.messages!.some((m) => m.content === TASK)).to.equal(true);
    // Every call and result of the run is in the log exactly once (steps stored early are not stored again).
    const log = await service.getEvents('run', EventFilter.all());
    const callIds = log.flatMap((e) => (e.message.type === 'assistant' ? (e.message.toolCalls ?? []).map((c) => c.id) : []));
    const resultIds = log.flatMap((e) => (e.message.type === 'tool' ? e.message.responses.map((r) => r.id) : []));
    expect(callIds).to.have.length(STEPS);
    expect(new Set(callIds).size).to.equal(STEPS);
    expect(resultIds).to.have.members(callIds);
    expect(log.at(-1)!.text).to.equal('file 7 sets it.');
  });

  it("a first prompt refused with OpenAI's body (an APICallError): the turn succeeds after exactly one retry", async function () {
    const memory = memoryWith({ compactionTrigger: new TurnCountTrigger(1000) });
    for (let i = 0; i < 8; i++) await runTask(memory, 'chat', `remember item ${i}: ${'details '.repeat(40)}`);
    window = Math.floor(providerTokens(server.requests.at(-1)!) * 0.6);
    const before = server.requests.length;

    const result = await runTask(memory, 'chat', 'which items do you remember?');

    expect(result.text).to.match(/^noted/);
    const turn = server.requests.slice(before);
    expect(turn).to.have.length(2);
    expect(providerTokens(turn[1]!)).to.be.at.most(window);
    expect((await service.getEvents('chat')).at(-1)!.text).to.match(/^noted/);
  });

  it('a refusal in the middle of a run: the finished steps are kept and the retried run continues from them', async function () {
    // No trigger fires inside the run, so the prompt grows until the model refuses it.
    const memory = memoryWith({ compactionTrigger: new TurnCountTrigger(1000) });
    window = 4000;
    const result = await runTask(memory);

    expect(result.text).to.equal('file 7 sets it.');
    const refused = server.requests.findIndex((r) => providerTokens(r) > window);
    expect(refused).to.be.greaterThan(1);
    const retried = server.requests[refused + 1]!;
    // The retry starts where the refused step was: its last message is the latest stored tool result.
    expect(retried.messages!.at(-1)).to.deep.include({
      role: 'tool',
      tool_call_id: server.requests[refused]!.messages!.at(-1)!.tool_call_id,
    });
    expect(retried.messages!.some((m) => m.content === TASK)).to.equal(true);
    expect(server.requests.filter((r) => providerTokens(r) > window)).to.have.length(1);
    const log = await service.getEvents('run', EventFilter.all());
    const callIds = log.flatMap((e) => (e.message.type === 'assistant' ? (e.message.toolCalls ?? []).map((c) => c.id) : []));
    expect(new Set(callIds).size).to.equal(callIds.length);
    expect(callIds).to.have.length(STEPS);
  });

  it('a model that refuses everything: one ContextOverflowError, the question stored', async function () {
    const memory = memoryWith({ compactionTrigger: new TurnCountTrigger(1000) });
    for (let i = 0; i < 4; i++) await runTask(memory, 'chat', `remember item ${i}`);
    refuseAll = true;
    const error = await rejection(runTask(memory, 'chat', 'anything?'));
    expect(error).to.be.instanceOf(ContextOverflowError);
    expect((error as ContextOverflowError).sessionId).to.equal('chat');
    expect((await service.getEvents('chat')).map((e) => e.text)).to.include('anything?');
  });

  it("recognises an Anthropic provider's refusal in the APICallError as well", async function () {
    const memory = memoryWith({ compactionTrigger: new TurnCountTrigger(1000) });
    let calls = 0;
    const mock = new MockLanguageModelV4({
      doGenerate: async () => {
        calls++;
        if (calls === 5) {
          throw new APICallError({
            message: 'prompt is too long: 210000 tokens > 200000 maximum',
            url: 'https://api.anthropic.com/v1/messages',
            requestBodyValues: {},
            statusCode: 400,
            responseBody: JSON.stringify(anthropicPromptTooLongBody(210000, 200000)),
            isRetryable: false,
          });
        }
        return {
          content: [{ type: 'text', text: `reply ${calls}` }],
          finishReason: { unified: 'stop', raw: 'end_turn' },
          usage: {
            inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 2, text: 2, reasoning: 0 },
          },
          warnings: [],
        };
      },
    });
    for (let i = 0; i < 4; i++) {
      await memory.generateText({ sessionId: 'anth', messages: [{ role: 'user', content: `item ${i}` }] }, (p) =>
        generateText({ model: mock, maxRetries: 0, ...p }),
      );
    }
    const result = await memory.generateText({ sessionId: 'anth', messages: [{ role: 'user', content: 'and?' }] }, (p) =>
      generateText({ model: mock, maxRetries: 0, ...p }),
    );
    expect(result.text).to.equal('reply 6');
    expect(calls).to.equal(6);
  });

  it('a streamed turn refused: the window is compacted for the next request, the stream and `stored` report the refusal', async function () {
    const memory = memoryWith({ compactionTrigger: new TurnCountTrigger(1000) });
    for (let i = 0; i < 8; i++) await runTask(memory, 'st', `remember item ${i}: ${'details '.repeat(40)}`);
    window = Math.floor(providerTokens(server.requests.at(-1)!) * 0.6);
    const before = server.requests.length;
    const turn = await memory.streamText({ sessionId: 'st', messages: [{ role: 'user', content: 'which items?' }] }, (prompt) =>
      streamText({ model, maxRetries: 0, ...prompt }),
    );
    let streamed = '';
    for await (const part of turn.result.textStream) streamed += part;
    // The application's stream carried no reply (the refusal is its error part).
    expect(streamed).to.equal('');
    const error = await rejection(turn.stored);
    expect(error).to.be.instanceOf(ContextOverflowError);
    expect((error as ContextOverflowError).archived).to.be.greaterThan(0);
    // Not sent again behind the application's back: the application's stream was the refused one.
    expect(server.requests.length - before).to.equal(1);
    const again = await runTask(memory, 'st', 'which items?');
    expect(again.text).to.match(/^noted/);
  });
});
