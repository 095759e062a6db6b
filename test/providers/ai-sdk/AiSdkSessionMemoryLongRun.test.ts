import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool, type ModelMessage } from 'ai';
import { expect } from 'chai';
import { TokenCountCompactionStrategy, TokenCountTrigger, fromOpenAIMessage } from 'session-compaction';
import { AiSdkSessionMemory } from 'session-compaction/ai-sdk';
import { startFakeOpenAIServer, type FakeOpenAIServer, type FakeRequestBody } from '../../support/fakeOpenAIServer.js';
import {
  KEEP_TOKENS,
  TRIGGER_TOKENS,
  WINDOW_TOKENS,
  answer,
  promptTokens,
  question,
  toolOutput,
} from '../../chat/support/acceptance.js';
import { silent } from '../../chat/support/harness.js';
import {
  ABANDONED_TURNS,
  LONG_TURNS,
  RESTART_TURN,
  RestartableStore,
  holdsPlaceholder,
  reportFigures,
  turnKind,
} from '../support/longRun.js';

const requestTokens = (body: FakeRequestBody) =>
  promptTokens((body.messages ?? []).map((m) => fromOpenAIMessage(m as Parameters<typeof fromOpenAIMessage>[0])));
const turnOf = (text: string) => Number(/Question (\d+)/.exec(text)![1]);
const schema = jsonSchema<{ ticket: string }>({
  type: 'object',
  properties: { ticket: { type: 'string' } },
  required: ['ticket'],
});
const TOOL_OF = { server: 'lookup', streamed: 'lookup', client: 'confirm', approval: 'escalate' } as const;
const tools = {
  lookup: tool({
    description: 'Looks a ticket up',
    inputSchema: schema,
    execute: async ({ ticket }) => toolOutput(Number(ticket.slice(2)) - 1000),
  }),
  confirm: tool({ description: 'The user confirms the ticket on the page', inputSchema: schema }),
  escalate: tool({
    description: 'Escalates a ticket',
    inputSchema: schema,
    needsApproval: true,
    execute: async ({ ticket }) => toolOutput(Number(ticket.slice(2)) - 1000),
  }),
};

/** A question gets a call of the turn's tool; a tool result the answer; anything else a short reply. */
function responder(server: FakeOpenAIServer): void {
  server.respondWith((body) => {
    const messages = body.messages ?? [];
    const last = messages.at(-1)!;
    const turn = turnOf(String([...messages].reverse().find((m) => m.role === 'user')!.content));
    if (last.role === 'tool') return { content: answer(turn) };
    return {
      content: null,
      toolCalls: [
        { id: `call_${turn}`, name: TOOL_OF[turnKind(turn)], arguments: JSON.stringify({ ticket: `T-${1000 + turn}` }) },
      ],
    };
  });
}

describe('AiSdkSessionMemory: a long run against a strict server', function () {
  let server: FakeOpenAIServer;
  let store: RestartableStore;
  beforeEach(async function () {
    server = await startFakeOpenAIServer({ strict: true });
    store = new RestartableStore();
  });
  afterEach(async function () {
    await server.close();
    store.close();
  });

  it(`${LONG_TURNS} turns, a tool on every turn (server, client-side, approval, streamed), a restart: none refused, nothing made up on a read`, async function () {
    this.timeout(240_000);
    responder(server);
    const model = createOpenAI({ baseURL: server.url, apiKey: 'k' }).chat('gpt-test');
    const open = () =>
      new AiSdkSessionMemory({
        sessionService: store.service,
        logger: silent,
        compactionTrigger: new TokenCountTrigger({ threshold: TRIGGER_TOKENS }),
        compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: KEEP_TOKENS }),
        contextWindowTokens: WINDOW_TOKENS,
      });
    let memory = open();
    let reads = 0;
    let invented = 0;
    const readBack = async () => {
      reads += 2;
      if (holdsPlaceholder((await memory.history('long')).messages)) invented++;
      if (holdsPlaceholder(await memory.uiMessages('long'))) invented++;
    };
    const turnWith = async (messages: ModelMessage[], streamed = false) => {
      if (!streamed) {
        return (
          await memory.generateText({ sessionId: 'long', messages }, (prompt) =>
            generateText({ model, tools, stopWhen: stepCountIs(5), ...prompt }),
          )
        ).responseMessages;
      }
      const { result, stored } = await memory.streamText({ sessionId: 'long', messages }, (prompt) =>
        streamText({ model, tools, stopWhen: stepCountIs(5), ...prompt }),
      );
      await result.consumeStream();
      await stored;
      return result.responseMessages;
    };
    /** A client-side tool's result the user sent late: with the question after next. */
    let late: { at: number; message: ModelMessage } | null = null;
    for (let turn = 1; turn <= LONG_TURNS; turn++) {
      const due = late !== null && late.at === turn ? [late.message] : [];
      if (due.length > 0) late = null;
      const ask: ModelMessage[] = [...due, { role: 'user', content: question(turn) }];
      const kind = turnKind(turn);
      const first = await turnWith(ask, kind === 'streamed');
      await readBack();
      if (turn === RESTART_TURN) {
        store.restart();
        memory = open();
        await readBack();
      }
      if (kind === 'client') {
        const callId = `call_${turn}`;
        const result: ModelMessage = {
          role: 'tool',
          content: [
            { type: 'tool-result', toolCallId: callId, toolName: 'confirm', output: { type: 'text', value: toolOutput(turn) } },
          ],
        };
        // The user moves on without answering; the result comes with the question after next.
        if (ABANDONED_TURNS.has(turn)) {
          late = { at: turn + 2, message: result };
          continue;
        }
        await turnWith([result]);
      } else if (kind === 'approval') {
        const parts = first[0]!.content as Array<{ type: string; approvalId?: string }>;
        const approvalId = parts.find((p) => p.type === 'tool-approval-request')!.approvalId!;
        await turnWith([{ role: 'tool', content: [{ type: 'tool-approval-response', approvalId, approved: true }] }]);
      }
      await readBack();
    }

    const placeholders = server.requests.filter(holdsPlaceholder).length;
    const figures = {
      integration: 'ai-sdk',
      turns: LONG_TURNS,
      requests: server.requests.length,
      refused: server.rejections.length,
      compactions: store.compactions,
      historyReads: reads,
      inventedOnRead: invented,
      placeholdersSent: placeholders,
    };
    reportFigures(figures);
    expect(server.rejections, 'requests the API would have refused').to.deep.equal([]);
    expect(invented).to.equal(0);
    expect(server.requests).to.have.length(2 * LONG_TURNS - ABANDONED_TURNS.size);
    // Only the turn after an abandoned call carries the placeholder: the late result replaces it from then on.
    expect(placeholders).to.equal(ABANDONED_TURNS.size * 2);
    // Each late result reached the model, right after its call, instead of the placeholder.
    for (const turn of ABANDONED_TURNS) {
      const answered = server.requests.find((r) =>
        (r.messages ?? []).some((m) => m.role === 'tool' && m.tool_call_id === `call_${turn}` && m.content === toolOutput(turn)),
      );
      expect(answered, `call_${turn}`).to.not.equal(undefined);
    }
    expect(Math.max(...server.requests.map(requestTokens))).to.be.at.most(WINDOW_TOKENS);
    expect(store.compactions).to.be.at.least(2);
    expect(store.restarts).to.equal(1);
  });
});
