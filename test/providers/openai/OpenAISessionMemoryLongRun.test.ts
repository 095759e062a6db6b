import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { expect } from 'chai';
import { EventFilter, TokenCountCompactionStrategy, TokenCountTrigger, fromOpenAIMessage } from 'session-compaction';
import { OpenAISessionMemory, type OpenAIChatTypes } from 'session-compaction/openai';
import type { SessionMemoryResponse } from 'session-compaction';
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
const tools = [
  {
    type: 'function' as const,
    function: {
      name: 'lookup',
      description: 'Looks a ticket up',
      parameters: { type: 'object', properties: { ticket: { type: 'string' } } },
    },
  },
];

describe('OpenAISessionMemory: a long run against a strict server (Chat Completions)', function () {
  let server: FakeOpenAIServer;
  let store: RestartableStore;
  beforeEach(async function () {
    server = await startFakeOpenAIServer({ strict: true });
    store = new RestartableStore();
    server.respondWith((body) => {
      const messages = body.messages ?? [];
      const turn = turnOf(String([...messages].reverse().find((m) => m.role === 'user')!.content));
      if (messages.at(-1)!.role === 'tool') return { content: answer(turn) };
      return {
        content: null,
        toolCalls: [{ id: `call_${turn}`, name: 'lookup', arguments: JSON.stringify({ ticket: `T-${1000 + turn}` }) }],
      };
    });
  });
  afterEach(async function () {
    await server.close();
    store.close();
  });

  it(`${LONG_TURNS} turns, each a tool call the client answers in the next request (some streamed), a restart while one waits: none refused, nothing made up in the log`, async function () {
    this.timeout(240_000);
    const client = new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 });
    const open = () =>
      new OpenAISessionMemory({
        sessionService: store.service,
        client,
        model: 'gpt-test',
        logger: silent,
        compactionTrigger: new TokenCountTrigger({ threshold: TRIGGER_TOKENS }),
        compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: KEEP_TOKENS }),
        contextWindowTokens: WINDOW_TOKENS,
      });
    let memory = open();
    let reads = 0;
    let invented = 0;
    const readBack = async () => {
      reads++;
      if (holdsPlaceholder(await store.service.getEvents('long', EventFilter.all()))) invented++;
    };
    const turnWith = async (messages: ChatCompletionMessageParam[], streamed: boolean) => {
      if (!streamed) return (await memory.call({ sessionId: 'long', messages, tools })).message;
      let done: SessionMemoryResponse<OpenAIChatTypes> | undefined;
      for await (const item of memory.stream({ sessionId: 'long', messages, tools }))
        if (item.type === 'done') done = item.response;
      return done!.message;
    };
    let late: { at: number; message: ChatCompletionMessageParam } | null = null;
    for (let turn = 1; turn <= LONG_TURNS; turn++) {
      const streamed = turnKind(turn) === 'streamed';
      const due = late !== null && late.at === turn ? [late.message] : [];
      if (due.length > 0) late = null;
      const call = await turnWith([...due, { role: 'user', content: question(turn) }], streamed);
      await readBack();
      const result: ChatCompletionMessageParam = {
        role: 'tool',
        tool_call_id: call.tool_calls![0]!.id,
        content: toolOutput(turn),
      };
      if (ABANDONED_TURNS.has(turn)) {
        late = { at: turn + 2, message: result };
        continue;
      }
      if (turn === RESTART_TURN) {
        store.restart();
        memory = open();
      }
      expect((await turnWith([result], streamed)).content).to.equal(answer(turn));
      await readBack();
    }

    const placeholders = server.requests.filter(holdsPlaceholder).length;
    reportFigures({
      integration: 'openai',
      turns: LONG_TURNS,
      requests: server.requests.length,
      refused: server.rejections.length,
      compactions: store.compactions,
      historyReads: reads,
      inventedOnRead: invented,
      placeholdersSent: placeholders,
    });
    expect(server.rejections, 'requests the API would have refused').to.deep.equal([]);
    expect(invented).to.equal(0);
    expect(server.requests).to.have.length(2 * LONG_TURNS - ABANDONED_TURNS.size);
    // The two requests of the turn after an abandoned call carry its placeholder; its late result replaces it after.
    expect(placeholders).to.equal(ABANDONED_TURNS.size * 2);
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
