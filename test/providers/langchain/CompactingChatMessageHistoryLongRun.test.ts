import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { RunnableLambda, RunnableWithMessageHistory } from '@langchain/core/runnables';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { expect } from 'chai';
import { z } from 'zod';
import { TokenCountCompactionStrategy, TokenCountTrigger, fromOpenAIMessage } from 'session-compaction';
import { CompactingChatMessageHistory, pairToolMessages } from 'session-compaction/langchain';
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

const lookup = tool(async ({ ticket }: { ticket: string }) => toolOutput(Number(ticket.slice(2)) - 1000), {
  name: 'lookup',
  description: 'Looks a ticket up',
  schema: z.object({ ticket: z.string() }),
});

describe('CompactingChatMessageHistory: a long run against a strict server', function () {
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

  it(`${LONG_TURNS} turns, each a tool loop whose ToolMessage is the next input (some streamed), a restart: none refused, nothing made up on a read`, async function () {
    this.timeout(240_000);
    const model = new ChatOpenAI({ model: 'gpt-test', apiKey: 'k', configuration: { baseURL: server.url }, maxRetries: 0 });
    const history = () =>
      new CompactingChatMessageHistory({
        sessionService: store.service,
        sessionId: 'long',
        logger: silent,
        compactionTrigger: new TokenCountTrigger({ threshold: TRIGGER_TOKENS }),
        compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: KEEP_TOKENS }),
      });
    // The prompt side of the pairing rule before the model: a call the user moved on from gets its placeholder here.
    const chain = new RunnableWithMessageHistory({
      runnable: RunnableLambda.from((messages: BaseMessage[]) => pairToolMessages(messages)).pipe(model.bindTools([lookup])),
      config: {},
      getMessageHistory: history,
    });
    const config = { configurable: { sessionId: 'long' } };
    const step = async (input: BaseMessage[], streamed: boolean): Promise<AIMessage | AIMessageChunk> => {
      if (!streamed) return (await chain.invoke(input, config)) as AIMessage;
      let merged: AIMessageChunk | undefined;
      for await (const chunk of await chain.stream(input, config)) {
        merged = merged === undefined ? (chunk as AIMessageChunk) : merged.concat(chunk as AIMessageChunk);
      }
      return merged!;
    };
    let reads = 0;
    let invented = 0;
    const readBack = async () => {
      reads++;
      const messages = await history().getMessages();
      if (
        holdsPlaceholder(messages.map((m) => m.content)) ||
        messages.some((m) => m instanceof ToolMessage && m.status === 'error')
      ) {
        invented++;
      }
    };
    let late: { at: number; message: ToolMessage } | null = null;
    for (let turn = 1; turn <= LONG_TURNS; turn++) {
      const streamed = turnKind(turn) === 'streamed';
      const due = late !== null && late.at === turn ? [late.message] : [];
      if (due.length > 0) late = null;
      const call = await step([...due, new HumanMessage(question(turn))], streamed);
      expect(call.tool_calls, `turn ${turn}`).to.have.length(1);
      await readBack();
      const toolMessage = (await lookup.invoke(call.tool_calls![0]!)) as ToolMessage;
      if (ABANDONED_TURNS.has(turn)) {
        late = { at: turn + 2, message: toolMessage };
        continue;
      }
      if (turn === RESTART_TURN) store.restart();
      const reply = await step([toolMessage], streamed);
      expect(reply.content).to.equal(answer(turn));
      await readBack();
    }

    const placeholders = server.requests.filter(holdsPlaceholder).length;
    reportFigures({
      integration: 'langchain',
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
