import { Agent, OpenAIProvider, RunState, Runner, setTracingDisabled, tool, type AgentInputItem } from '@openai/agents';
import { expect } from 'chai';
import { z } from 'zod';
import { TokenCountCompactionStrategy, TokenCountTrigger } from 'session-compaction';
import { CompactingSession } from 'session-compaction/openai-agents';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../support/fakeOpenAIServer.js';
import { KEEP_TOKENS, TRIGGER_TOKENS, WINDOW_TOKENS, answer, question, toolOutput } from '../../chat/support/acceptance.js';
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

setTracingDisabled(true);

const turnOf = (text: string) => Number(/Question (\d+)/.exec(text)![1]);
const ticketTurn = ({ ticket }: { ticket: string }) => Number(ticket.slice(2)) - 1000;
const lookup = tool({
  name: 'lookup',
  description: 'Looks a ticket up',
  parameters: z.object({ ticket: z.string() }),
  execute: async (args) => toolOutput(ticketTurn(args)),
});
const escalate = tool({
  name: 'escalate',
  description: 'Escalates a ticket; a human approves it first',
  parameters: z.object({ ticket: z.string() }),
  needsApproval: true,
  execute: async (args) => toolOutput(ticketTurn(args)),
});

const agent = new Agent({
  name: 'tickets',
  instructions: 'Answer ticket questions.',
  model: 'gpt-test',
  tools: [lookup, escalate],
});

/** A made-up output on a history read: the placeholder, or an output marked incomplete that was never given. */
const invention = (items: readonly AgentInputItem[]) =>
  holdsPlaceholder(items) ||
  items.some(
    (i) =>
      (i as { type?: string; status?: string }).type === 'function_call_result' &&
      (i as { status?: string }).status === 'incomplete',
  );

describe('CompactingSession: a long run through the runner against a strict server (Responses API)', function () {
  let server: FakeOpenAIServer;
  let store: RestartableStore;
  beforeEach(async function () {
    server = await startFakeOpenAIServer({ strict: true });
    store = new RestartableStore();
    server.respondWith((body) => {
      const input = (body.input ?? []) as Array<Record<string, unknown>>;
      const users = input.filter((i) => i.role === 'user');
      const turn = turnOf(JSON.stringify(users.at(-1)!.content));
      if (input.at(-1)!.type === 'function_call_output') return { content: answer(turn) };
      const name = turnKind(turn) === 'client' || turnKind(turn) === 'approval' ? 'escalate' : 'lookup';
      return {
        content: null,
        toolCalls: [{ id: `call_${turn}`, name, arguments: JSON.stringify({ ticket: `T-${1000 + turn}` }) }],
      };
    });
  });
  afterEach(async function () {
    await server.close();
    store.close();
  });

  it(`${LONG_TURNS} turns, a tool on every turn, approvals granted and declined, some streamed, a restart while an approval waits: none refused, nothing made up on a read`, async function () {
    this.timeout(240_000);
    const runner = new Runner({ modelProvider: new OpenAIProvider({ apiKey: 'k', baseURL: server.url, useResponses: true }) });
    const open = () =>
      new CompactingSession({
        sessionService: store.service,
        sessionId: 'long',
        logger: silent,
        compactionTrigger: new TokenCountTrigger({ threshold: TRIGGER_TOKENS }),
        compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: KEEP_TOKENS }),
        contextWindowTokens: WINDOW_TOKENS,
      });
    let session = open();
    let reads = 0;
    let invented = 0;
    const readBack = async () => {
      reads++;
      if (invention(await session.getItems())) invented++;
    };
    const run = async (input: string | RunState<unknown, typeof agent>, streamed: boolean) => {
      if (!streamed) return runner.run(agent, input, { session });
      const result = await runner.run(agent, input, { session, stream: true });
      for await (const _event of result) {
        // drain
      }
      await result.completed;
      return result;
    };
    /** Runs paused for an approval the user has not given yet: resumed late, after the question after next. */
    const waiting = new Map<number, RunState<unknown, typeof agent>>();
    for (let turn = 1; turn <= LONG_TURNS; turn++) {
      const late = waiting.get(turn - 2);
      if (late !== undefined) {
        waiting.delete(turn - 2);
        late.approve(late.getInterruptions()[0]!);
        expect((await run(late, false)).finalOutput).to.equal(answer(turn - 2));
        await readBack();
      }
      const kind = turnKind(turn);
      const first = await run(question(turn), kind === 'streamed');
      await readBack();
      if (kind === 'server' || kind === 'streamed') {
        expect(first.finalOutput).to.equal(answer(turn));
        continue;
      }
      expect(first.interruptions).to.have.length(1);
      if (ABANDONED_TURNS.has(turn)) {
        waiting.set(turn, first.state);
        continue;
      }
      let state = first.state;
      if (turn === RESTART_TURN) {
        const saved = state.toString();
        store.restart();
        session = open();
        state = await RunState.fromString(agent, saved);
        await readBack();
      }
      const interruption = state.getInterruptions()[0]!;
      if (kind === 'approval') state.approve(interruption);
      else state.reject(interruption);
      expect((await run(state, false)).finalOutput).to.equal(answer(turn));
      await readBack();
    }

    reportFigures({
      integration: 'openai-agents',
      turns: LONG_TURNS,
      requests: server.requests.length,
      refused: server.rejections.length,
      compactions: store.compactions,
      historyReads: reads,
      inventedOnRead: invented,
      placeholdersSent: server.requests.filter(holdsPlaceholder).length,
    });
    expect(server.rejections, 'requests the API would have refused').to.deep.equal([]);
    expect(invented).to.equal(0);
    expect(server.requests).to.have.length(2 * LONG_TURNS);
    // The runner itself leaves a call without output out of the model input: nothing needs a placeholder.
    expect(server.requests.filter(holdsPlaceholder)).to.deep.equal([]);
    expect(store.compactions).to.be.at.least(2);
    expect(store.restarts).to.equal(1);
  });
});
