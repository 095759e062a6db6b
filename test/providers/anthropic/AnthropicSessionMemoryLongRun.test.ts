import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { expect } from 'chai';
import { EventFilter, TokenCountCompactionStrategy, TokenCountTrigger } from 'session-compaction';
import { AnthropicSessionMemory, fromAnthropicPrompt } from 'session-compaction/anthropic';
import {
  startFakeAnthropicServer,
  type FakeAnthropicRequest,
  type FakeAnthropicServer,
} from '../../support/fakeAnthropicServer.js';
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

const SYSTEM = 'You answer questions about tickets. Use the lookup tool.';
const tools: Tool[] = [
  {
    name: 'lookup',
    description: 'Looks a ticket up',
    input_schema: { type: 'object', properties: { ticket: { type: 'string' } } },
  },
];
const requestTokens = (body: FakeAnthropicRequest) =>
  promptTokens(
    fromAnthropicPrompt({ system: body.system as never, messages: (body.messages ?? []) as MessageParam[] }).map(
      (e) => e.message,
    ),
  );

describe('AnthropicSessionMemory: a long run against the Messages API fake', function () {
  let server: FakeAnthropicServer;
  let store: RestartableStore;
  beforeEach(async function () {
    server = await startFakeAnthropicServer({ countTokens: requestTokens });
    store = new RestartableStore();
    server.respondWith((body) => {
      const messages = body.messages ?? [];
      const texts = JSON.stringify(messages.filter((m) => m.role === 'user'));
      const turn = Math.max(...[...texts.matchAll(/Question (\d+)/g)].map((m) => Number(m[1])));
      const last = messages.at(-1)!;
      const answered = typeof last.content !== 'string' && last.content.some((b) => b.type === 'tool_result');
      const asked =
        typeof last.content === 'string' ||
        last.content.some((b) => b.type === 'text' && String(b.text).includes(`Question ${turn}`));
      if (answered && !asked) return { text: answer(turn) };
      return {
        ...(turn % 2 === 0 ? { thinking: `Turn ${turn}: I need the lookup tool.` } : {}),
        toolUses: [{ id: `toolu_${turn}`, name: 'lookup', input: { ticket: `T-${1000 + turn}` } }],
      };
    });
  });
  afterEach(async function () {
    await server.close();
    store.close();
  });

  it(`${LONG_TURNS} turns, each a tool_use the client answers in the next request (some streamed), a restart while one waits: none refused, nothing made up in the log`, async function () {
    this.timeout(240_000);
    const client = new Anthropic({ baseURL: server.url, apiKey: 'k', maxRetries: 0 });
    const open = () =>
      new AnthropicSessionMemory({
        sessionService: store.service,
        client,
        model: 'claude-test',
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
    const turnWith = async (messages: MessageParam[], streamed: boolean) => {
      const request = { sessionId: 'long', messages, system: SYSTEM, tools };
      if (!streamed) return (await memory.call(request)).message;
      let done: Anthropic.Message | undefined;
      for await (const item of memory.stream(request)) if (item.type === 'done') done = item.response.message;
      return done!;
    };
    let late: { at: number; block: Anthropic.ToolResultBlockParam } | null = null;
    for (let turn = 1; turn <= LONG_TURNS; turn++) {
      const streamed = turnKind(turn) === 'streamed';
      const due = late !== null && late.at === turn ? [late.block] : [];
      if (due.length > 0) late = null;
      const reply = await turnWith([{ role: 'user', content: [...due, { type: 'text', text: question(turn) }] }], streamed);
      await readBack();
      const use = reply.content.find((b) => b.type === 'tool_use')!;
      const block: Anthropic.ToolResultBlockParam = { type: 'tool_result', tool_use_id: use.id, content: toolOutput(turn) };
      if (ABANDONED_TURNS.has(turn)) {
        late = { at: turn + 2, block };
        continue;
      }
      if (turn === RESTART_TURN) {
        store.restart();
        memory = open();
      }
      const final = await turnWith([{ role: 'user', content: [block] }], streamed);
      expect(final.content.find((b) => b.type === 'text')?.text).to.equal(answer(turn));
      await readBack();
    }

    const placeholders = server.requests.filter(holdsPlaceholder).length;
    reportFigures({
      integration: 'anthropic',
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
    expect(placeholders).to.equal(ABANDONED_TURNS.size * 2);
    for (const turn of ABANDONED_TURNS) {
      const answered = server.requests.find((r) =>
        JSON.stringify(r.messages).includes(
          JSON.stringify({ type: 'tool_result', tool_use_id: `toolu_${turn}`, content: toolOutput(turn) }),
        ),
      );
      expect(answered, `toolu_${turn}`).to.not.equal(undefined);
    }
    expect(Math.max(...server.requests.map(requestTokens))).to.be.at.most(WINDOW_TOKENS);
    expect(store.compactions).to.be.at.least(2);
    expect(store.restarts).to.equal(1);
  });
});
