import { expect } from 'chai';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import {
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  TokenCountCompactionStrategy,
  TokenCountTrigger,
  fromOpenAIMessage,
  type CompactionStrategy,
} from 'session-compaction';
import { OpenAISessionMemory, type OpenAISessionMemoryOptions } from 'session-compaction/openai';
import { startFakeOpenAIServer, type FakeOpenAIServer, type FakeRequestBody } from '../support/fakeOpenAIServer.js';
import { promptTokens } from './support/acceptance.js';
import { silent } from './support/harness.js';

/** The prompt budget of the loop below, and the trigger that should keep every request within it. */
const WINDOW = 1800;
const TRIGGER = 1400;
const KEEP = 700;
const STEPS = 14;
const TASK = 'Read every file of the repository and tell me which one configures the retry policy.';

/** One file read: ~930 tokens, so one step after a reply under the trigger can pass the window. */
const fileContent = (step: number) => `// file ${step}\n${`export const setting${step} = 'value ${step}'; `.repeat(90)}`;

const requestTokens = (body: FakeRequestBody) =>
  promptTokens((body.messages ?? []).map((m) => fromOpenAIMessage(m as ChatCompletionMessageParam)));

describe('SessionMemory: the trigger is checked before every model call of a tool loop', function () {
  let server: FakeOpenAIServer;
  let service: DefaultSessionService;

  beforeEach(async function () {
    server = await startFakeOpenAIServer({ strict: true });
    // The model reads one file per step, and answers after the last.
    server.respondWith((body) => {
      const reads = (body.messages ?? []).filter((m) => m.role === 'tool').length;
      const step = Number(/file (\d+)/.exec(String(body.messages!.at(-1)!.content))?.[1] ?? 0);
      if (step >= STEPS) return { content: 'retry.ts configures it.' };
      return {
        content: null,
        toolCalls: [{ id: `call_${step + 1}`, name: 'read_file', arguments: JSON.stringify({ n: step + 1, reads }) }],
      };
    });
    service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
  });
  afterEach(async function () {
    await server.close();
  });

  /** The agent loop of one user turn: call, run the tool, send the result back, until the model answers. */
  async function runLoop(options: Partial<OpenAISessionMemoryOptions>, strategy?: CompactionStrategy): Promise<void> {
    const memory = new OpenAISessionMemory({
      sessionService: service,
      client: new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 }),
      model: 'agent',
      logger: silent,
      compactionTrigger: new TokenCountTrigger({ threshold: TRIGGER }),
      compactionStrategy: strategy ?? new TokenCountCompactionStrategy({ maxTokens: KEEP }),
      ...options,
    });
    let response = await memory.call({ sessionId: 'loop', messages: [{ role: 'user', content: TASK }] });
    for (let i = 0; i < STEPS + 2 && (response.message.tool_calls?.length ?? 0) > 0; i++) {
      const call = response.message.tool_calls![0]! as { id: string; function: { arguments: string } };
      const n = (JSON.parse(call.function.arguments) as { n: number }).n;
      response = await memory.call({
        sessionId: 'loop',
        messages: [{ role: 'tool', tool_call_id: call.id, content: fileContent(n) }],
      });
    }
    expect(response.message.content).to.equal('retry.ts configures it.');
  }

  it('without the per-step check, tool results push the prompt past the window before the turn ends', async function () {
    await runLoop({ compaction: { everyStep: false } });
    expect(Math.max(...server.requests.map(requestTokens))).to.be.greaterThan(WINDOW);
  });

  it('with it (the default), every request of a 14-step loop inside one turn stays within the window', async function () {
    let compactions = 0;
    service.events.on('compactionCompleted', () => compactions++);
    await runLoop({});
    expect(server.requests).to.have.length(STEPS + 1);
    expect(server.rejections, 'no tool call was separated from its result').to.deep.equal([]);
    expect(Math.max(...server.requests.map(requestTokens))).to.be.at.most(WINDOW);
    expect(compactions).to.be.greaterThan(1);
    // The task stays in every prompt, and each request ends with the result it brings.
    for (const [i, body] of server.requests.entries()) {
      expect(
        body.messages!.some((m) => m.content === TASK),
        `request ${i} lost the task`,
      ).to.equal(true);
      if (i > 0) expect(body.messages!.at(-1)!.content).to.equal(fileContent(i));
    }
    // Nothing is lost: every call and every result is in the log, each once.
    const log = await service.getEvents('loop', EventFilter.all());
    expect(log.filter((e) => e.message.type === 'tool')).to.have.length(STEPS);
    expect(log.filter((e) => e.message.type === 'assistant' && (e.message.toolCalls?.length ?? 0) > 0)).to.have.length(STEPS);
  });

  it("a strategy that would cut the turn's input away is not committed inside the turn", async function () {
    // 'never' (the Java cut) archives the whole window when no turn starts after the cut: inside one turn
    // that would take the task and the call the results answer.
    await runLoop({}, new TokenCountCompactionStrategy({ maxTokens: KEEP, cutWithinTurn: 'never' }));
    expect(server.rejections).to.deep.equal([]);
    for (const body of server.requests) expect(body.messages!.some((m) => m.content === TASK)).to.equal(true);
  });
});
