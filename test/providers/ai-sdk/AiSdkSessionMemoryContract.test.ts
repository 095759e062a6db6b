/**
 * The AI SDK's tool contract, checked with the real `ai` package against a strict loopback server: a tool
 * without `execute` (a client-side tool) whose result arrives as the next turn's only message, as the SDK's
 * docs describe it; a tool that needs approval, approved or denied in the next turn; a call the user moved on
 * from, and its late result. What a history read returns never holds a result made up for a waiting call,
 * and the real result always reaches the model — across a compaction, a restart and on every backend.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool, type ModelMessage } from 'ai';
import { expect } from 'chai';
import {
  DefaultSessionService,
  InMemorySessionRepository,
  SqliteSessionRepository,
  TokenCountCompactionStrategy,
  type SessionRepository,
} from 'session-compaction';
import { AiSdkSessionMemory, DEFAULT_MISSING_TOOL_OUTPUT, type AiSdkSessionMemoryOptions } from 'session-compaction/ai-sdk';
import { allBackends } from '../../support/backends.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../support/fakeOpenAIServer.js';
import { silent } from '../../chat/support/harness.js';

const schema = jsonSchema<{ order: number }>({ type: 'object', properties: { order: { type: 'number' } }, required: ['order'] });
/** A client-side tool: no `execute`, the page answers it. */
const confirmAddress = tool({ description: 'Asks the user to confirm the address', inputSchema: schema });
/** A tool that runs only once a human approved it. */
const refund = tool({
  description: 'Refunds an order',
  inputSchema: schema,
  needsApproval: true,
  execute: async () => 'refunded',
});

const ask = (text: string): ModelMessage[] => [{ role: 'user', content: text }];
const toolResult = (toolCallId: string, toolName: string, value: string): ModelMessage => ({
  role: 'tool',
  content: [{ type: 'tool-result', toolCallId, toolName, output: { type: 'text', value } }],
});

/** Any result a history read or a prompt could hold that the library made up. */
const madeUp = (value: unknown) => JSON.stringify(value).includes(DEFAULT_MISSING_TOOL_OUTPUT);

describe('AiSdkSessionMemory: the AI SDK tool contract (ai, @ai-sdk/openai)', function () {
  let server: FakeOpenAIServer;
  let model: ReturnType<ReturnType<typeof createOpenAI>['chat']>;

  beforeEach(async function () {
    server = await startFakeOpenAIServer({ strict: true });
    server.respondWith((body) => {
      const messages = body.messages ?? [];
      const last = messages.at(-1)!;
      if (last.role === 'tool') return { content: `Noted: ${String(last.content)}` };
      const name = String(last.content).includes('refund') ? 'refund' : 'confirmAddress';
      return { content: null, toolCalls: [{ id: `call_${server.requests.length}`, name, arguments: '{"order":7}' }] };
    });
    model = createOpenAI({ baseURL: server.url, apiKey: 'k' }).chat('gpt-test');
  });
  afterEach(() => server.close());

  const memoryOn = (repository: SessionRepository, options: Partial<AiSdkSessionMemoryOptions> = {}) =>
    new AiSdkSessionMemory({
      sessionService: new DefaultSessionService(repository, { logger: silent }),
      logger: silent,
      ...options,
    });
  const run = (memory: AiSdkSessionMemory, sessionId: string, messages: ModelMessage[]) =>
    memory.generateText({ sessionId, messages }, (prompt) =>
      generateText({ model, tools: { confirmAddress, refund }, stopWhen: stepCountIs(5), ...prompt }),
    );

  /** The call the model made in the last turn, waiting for its result at the end of the history. */
  async function waitingCall(memory: AiSdkSessionMemory, sessionId: string): Promise<string> {
    const { messages } = await memory.history(sessionId);
    const last = messages.at(-1)!;
    expect(last.role).to.equal('assistant');
    const call = (last.content as Array<{ type: string; toolCallId?: string }>).find((p) => p.type === 'tool-call')!;
    expect(madeUp(messages)).to.equal(false);
    return call.toolCallId!;
  }

  /** A client-side tool answered in the next turn: the real result reaches the model, nothing made up anywhere. */
  async function clientSideTool(memory: () => AiSdkSessionMemory, sessionId: string, between?: () => Promise<void>) {
    const first = await run(memory(), sessionId, ask('Ship order 7 to my address'));
    expect(first.finishReason).to.equal('tool-calls');
    const callId = await waitingCall(memory(), sessionId);
    const ui = await memory().uiMessages(sessionId);
    expect(ui.at(-1)!.parts.find((p) => p.type === 'tool-confirmAddress')).to.deep.include({ state: 'input-available' });
    await between?.();
    const second = await run(memory(), sessionId, [toolResult(callId, 'confirmAddress', 'address confirmed')]);
    expect(second.text).to.equal('Noted: address confirmed');
    const sent = server.requests.at(-1)!.messages!;
    expect(sent.filter((m) => m.role === 'tool')).to.deep.equal([
      { role: 'tool', tool_call_id: callId, content: 'address confirmed' },
    ]);
    const { messages } = await memory().history(sessionId);
    expect(madeUp(messages)).to.equal(false);
    expect(madeUp(await memory().uiMessages(sessionId))).to.equal(false);
  }

  it('a client-side tool: the call waits in the history, its result is the next turn’s only message and reaches the model', async function () {
    const memory = memoryOn(new InMemorySessionRepository());
    await clientSideTool(() => memory, 's');
    expect(server.rejections).to.deep.equal([]);
  });

  it('a client-side tool answered through streamText stores and sends the same', async function () {
    const memory = memoryOn(new InMemorySessionRepository());
    const stream = (messages: ModelMessage[]) =>
      memory.streamText({ sessionId: 's', messages }, (prompt) =>
        streamText({ model, tools: { confirmAddress, refund }, stopWhen: stepCountIs(5), ...prompt }),
      );
    const first = await stream(ask('Ship order 7 to my address'));
    await first.result.consumeStream();
    await first.stored;
    const callId = await waitingCall(memory, 's');
    const second = await stream([toolResult(callId, 'confirmAddress', 'address confirmed')]);
    expect(await second.result.text).to.equal('Noted: address confirmed');
    await second.stored;
    expect(server.rejections).to.deep.equal([]);
  });

  for (const approved of [true, false]) {
    it(`a tool approval ${approved ? 'granted' : 'denied'} in the next turn: the SDK ${approved ? 'runs the tool and its result' : 'sends the denial, which'} reaches the model`, async function () {
      const memory = memoryOn(new InMemorySessionRepository());
      const first = await run(memory, 's', ask('Please refund order 7'));
      const request = (first.responseMessages[0]!.content as Array<{ type: string; approvalId?: string }>).find(
        (p) => p.type === 'tool-approval-request',
      )!;
      await waitingCall(memory, 's');
      const second = await run(memory, 's', [
        { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId!, approved }] },
      ]);
      const sentTool = server.requests.at(-1)!.messages!.filter((m) => m.role === 'tool');
      expect(sentTool).to.have.length(1);
      if (approved) {
        expect(second.text).to.equal('Noted: refunded');
        expect(sentTool[0]!.content).to.equal('refunded');
      } else expect(String(sentTool[0]!.content)).to.not.include(DEFAULT_MISSING_TOOL_OUTPUT);
      const ui = await memory.uiMessages('s');
      expect(ui.at(-1)!.parts.find((p) => p.type === 'tool-refund')).to.deep.include({
        state: approved ? 'output-available' : 'output-denied',
      });
      expect(server.rejections).to.deep.equal([]);
    });
  }

  it('a call the user moved on from gets a placeholder in the prompt only; its late result wins and reaches the model', async function () {
    const memory = memoryOn(new InMemorySessionRepository());
    await run(memory, 's', ask('Ship order 7 to my address'));
    const callId = await waitingCall(memory, 's');
    server.enqueue({ content: 'Sure, something else.' });
    await run(memory, 's', ask('Never mind, tell me a joke'));
    // The prompt answered the abandoned call with a placeholder; the log and the history read did not.
    const abandoned = server.requests.at(-1)!.messages!;
    const placeholder = abandoned.find((m) => m.role === 'tool')!;
    expect(placeholder.tool_call_id).to.equal(callId);
    expect(String(placeholder.content)).to.include(DEFAULT_MISSING_TOOL_OUTPUT);
    expect(madeUp((await memory.history('s')).messages)).to.equal(false);
    expect(madeUp(await memory.uiMessages('s'))).to.equal(false);
    server.enqueue({ content: 'Thanks for confirming.' });
    await run(memory, 's', [toolResult(callId, 'confirmAddress', 'address confirmed')]);
    const late = server.requests.at(-1)!.messages!;
    expect(late.filter((m) => m.role === 'tool')).to.deep.equal([
      { role: 'tool', tool_call_id: callId, content: 'address confirmed' },
    ]);
    expect(late.map((m) => m.role).slice(0, 3)).to.deep.equal(['user', 'assistant', 'tool']);
    expect(server.rejections).to.deep.equal([]);
  });

  it('across a compaction while the call waits and a restart (new repository and memory on the same SQLite file)', async function () {
    const dir = mkdtempSync(join(tmpdir(), 'ai-sdk-contract-'));
    try {
      const path = join(dir, 'sessions.db');
      let repository = new SqliteSessionRepository({ path });
      const compacting = () =>
        memoryOn(repository, {
          compactionTrigger: () => true,
          compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: 1 }),
        });
      await clientSideTool(compacting, 'trip', async () => {
        repository.close();
        repository = new SqliteSessionRepository({ path });
      });
      expect(server.rejections).to.deep.equal([]);
      repository.close();
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

        it('a client-side tool, compacted while it waits: its real result reaches the model, nothing made up', async function () {
          const memory = memoryOn(backend.repository(), {
            compactionTrigger: () => true,
            compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: 1 }),
          });
          await clientSideTool(() => memory, `client-${Date.now()}`);
          expect(server.rejections).to.deep.equal([]);
        });
      });
    }
  });
});
