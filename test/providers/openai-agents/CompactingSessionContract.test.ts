/**
 * The Agents SDK's session contract, checked against the real runner of `@openai/agents` with its own scripted
 * model: what `MemorySession` does (the reference), the session persistence of a human-approval resume,
 * including the reconciliation of an append whose acknowledgement was lost, and the compaction policy of a
 * compaction-aware session (`OpenAIResponsesCompactionSession`'s: never compact history the model has not
 * seen). Scenarios run on both sessions where the SDK's own behaviour is the expected one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Agent,
  MemorySession,
  OutputGuardrailTripwireTriggered,
  RunState,
  Runner,
  setTracingDisabled,
  tool,
  type AgentInputItem,
  type Session,
} from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents-core/testing';
import { expect } from 'chai';
import { z } from 'zod';
import {
  DefaultSessionService,
  EventFilter,
  IllegalStateError,
  InMemorySessionRepository,
  SqliteSessionRepository,
  RecursiveSummarizationCompactionStrategy,
  TokenCountCompactionStrategy,
  type ChatClient,
  type CompactionRequest,
  type CompactionStrategy,
  type SessionRepository,
} from 'session-compaction';
import { CompactingSession, type CompactingSessionOptions } from 'session-compaction/openai-agents';
import { toolCallStates, type ChatRequest } from 'session-compaction/spi';
import { encodeNative } from '../../../src/chat/nativeMessages.js';
import { allBackends } from '../../support/backends.js';
import { expectRejects } from '../../support/fixtures.js';
import { silent } from '../../chat/support/harness.js';

setTracingDisabled(true);

const user = (text: string): AgentInputItem => ({ type: 'message', role: 'user', content: text });

/**
 * Items as a JSON store keeps them: a key set to `undefined` (the runner sets `namespace` and `providerData`
 * so) is absent when read back, where MemorySession, a structured clone, keeps it.
 */
const stored = (items: readonly AgentInputItem[]) => encodeNative(items);

/** A strategy that records that it ran and archives everything but the last item. */
class RecordingStrategy implements CompactionStrategy {
  runs = 0;
  async compact(request: CompactionRequest) {
    this.runs++;
    return new TokenCountCompactionStrategy({ maxTokens: 1 }).compact(request);
  }
}

/** A summariser that answers at once and reports the tokens of each call, as an endpoint does. */
class MeteredSummarizer implements ChatClient {
  calls = 0;
  async call(request: ChatRequest): Promise<string> {
    return (await this.complete(request)).text;
  }
  async complete(_request: ChatRequest) {
    this.calls++;
    return { text: 'Summary of the earlier turns.', usage: { promptTokens: 70, completionTokens: 30, totalTokens: 100 } };
  }
}

/** A service whose next append is stored, but whose acknowledgement is lost (the caller sees an error). */
function losingAcknowledgements(service: DefaultSessionService): { service: DefaultSessionService; loseNext(): void } {
  let lose = false;
  const proxy = new Proxy(service, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (key === 'appendMessage') {
        return async (...args: Parameters<DefaultSessionService['appendMessage']>) => {
          const event = await target.appendMessage(...args);
          if (lose) {
            lose = false;
            throw new Error('append acknowledgement lost');
          }
          return event;
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { service: proxy, loseNext: () => void (lose = true) };
}

/** A tool that needs a human's approval, and an agent that stops on its output. */
function approvalAgent(model: ScriptedModel, execute: () => Promise<string>) {
  return new Agent({
    name: 'approvals',
    model,
    tools: [
      tool({
        name: 'refund',
        description: 'Refunds an order.',
        parameters: z.object({}),
        needsApproval: true,
        execute,
      }),
    ],
    toolUseBehavior: 'stop_on_first_tool',
  });
}

const runner = new Runner({ tracingDisabled: true });

describe('CompactingSession: the Agents SDK session contract (@openai/agents runner, scripted model)', function () {
  let repository: InMemorySessionRepository;
  let service: DefaultSessionService;
  beforeEach(function () {
    repository = new InMemorySessionRepository();
    service = new DefaultSessionService(repository, { logger: silent });
  });

  const sessionWith = (options: Partial<CompactingSessionOptions> = {}) =>
    new CompactingSession({ sessionService: service, sessionId: 's', logger: silent, ...options });

  describe('as MemorySession', function () {
    /** Runs the same scenario on a MemorySession and on a CompactingSession and gives both histories. */
    async function onBoth(scenario: (session: Session) => Promise<void>): Promise<[AgentInputItem[], AgentInputItem[]]> {
      const reference = new MemorySession();
      const ours = sessionWith();
      await scenario(reference);
      await scenario(ours);
      return [stored(await reference.getItems()), stored(await ours.getItems())] as [AgentInputItem[], AgentInputItem[]];
    }

    it('keeps the items of a run exactly: input, tool call, tool output, answer', async function () {
      const [expected, actual] = await onBoth(async (session) => {
        const model = new ScriptedModel([
          [functionCall('lookup', { id: 7 }, { callId: 'call-1' })],
          [assistantMessage('Order 7 shipped.')],
        ]);
        const lookup = tool({
          name: 'lookup',
          description: 'Looks up',
          parameters: z.object({ id: z.number() }),
          execute: async () => 'shipped',
        });
        await runner.run(new Agent({ name: 'a', model, tools: [lookup] }), 'Where is order 7?', { session });
      });
      expect(actual).to.deep.equal(expected);
      expect(actual.map((i) => ('role' in i ? i.role : i.type))).to.deep.equal([
        'user',
        'function_call',
        'function_call_result',
        'assistant',
      ]);
    });

    it('getItems(limit) is the most recent `limit` items in order; 0 gives none; more than stored gives all', async function () {
      const items = [user('a'), user('b'), user('c')];
      const reference = new MemorySession({ initialItems: items });
      const ours = sessionWith();
      await ours.addItems(items);
      for (const limit of [0, 1, 2, 3, 5, undefined]) {
        expect(stored(await ours.getItems(limit)), `limit ${limit}`).to.deep.equal(stored(await reference.getItems(limit)));
      }
    });

    it('popItem removes and returns the most recent item; clearSession empties the history', async function () {
      const [expected, actual] = await onBoth(async (session) => {
        await session.addItems([user('keep'), user('undo')]);
        expect(await session.popItem()).to.deep.equal(user('undo'));
      });
      expect(actual).to.deep.equal(expected);
      const ours = sessionWith();
      await ours.clearSession();
      expect(await ours.getItems()).to.deep.equal([]);
    });

    it('a run paused for approval stores the call waiting for its result, and reads it back as it is', async function () {
      const [expected, actual] = await onBoth(async (session) => {
        const paused = await runner.run(
          approvalAgent(new ScriptedModel([[functionCall('refund', {}, { callId: 'r1' })]]), async () => 'ok'),
          'Refund me',
          {
            session,
          },
        );
        expect(paused.interruptions).to.have.length(1);
      });
      expect(actual).to.deep.equal(expected);
      expect(actual.map((i) => ('role' in i ? i.role : i.type))).to.deep.equal(['user', 'function_call']);
      expect(toolCallStates((await service.getEvents('s')) ?? []).get('r1')).to.equal('pending');
    });

    it('an approved resume and a rejected one store what MemorySession stores', async function () {
      for (const approve of [true, false]) {
        const [expected, actual] = await onBoth(async (session) => {
          const agent = approvalAgent(
            new ScriptedModel([[functionCall('refund', {}, { callId: 'r1' })], [assistantMessage('Declined.')]]),
            async () => 'refunded',
          );
          const paused = await runner.run(agent, 'Refund me', { session });
          if (approve) paused.state.approve(paused.interruptions[0]!);
          else paused.state.reject(paused.interruptions[0]!);
          await runner.run(agent, paused.state, { session });
        });
        expect(actual, approve ? 'approved' : 'rejected').to.deep.equal(expected);
        await sessionWith().clearSession();
      }
    });

    it('an output guardrail that trips persists the blocked output as MemorySession does (history transactions)', async function () {
      const [expected, actual] = await onBoth(async (session) => {
        const agent = new Agent({
          name: 'guarded',
          model: new ScriptedModel([[assistantMessage('Here is the secret.')]]),
          outputGuardrails: [{ name: 'no secrets', execute: async () => ({ tripwireTriggered: true, outputInfo: {} }) }],
        });
        await expectRejects(runner.run(agent, 'Tell me the secret', { session }), OutputGuardrailTripwireTriggered);
      });
      expect(actual).to.deep.equal(expected);
    });
  });

  describe('history transactions', function () {
    const item = (text: string): AgentInputItem => ({
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text }],
    });

    it('applies an operation once: a retry with the same transaction changes nothing', async function () {
      const session = sessionWith();
      await session.addItems([user('q')]);
      const args = { operationId: 'op-1', transaction: { type: 'append_items' as const, items: [item('blocked')] } };
      await session.applyHistoryTransaction(args);
      await session.applyHistoryTransaction(args);
      expect(await session.getItems()).to.deep.equal([user('q'), item('blocked')]);
    });

    it('refuses another transaction under an operation id already used, and changes nothing', async function () {
      const session = sessionWith();
      await session.applyHistoryTransaction({ operationId: 'op-1', transaction: { type: 'append_items', items: [item('a')] } });
      await expectRejects(
        session.applyHistoryTransaction({ operationId: 'op-1', transaction: { type: 'append_items', items: [item('b')] } }),
        IllegalStateError,
        'already applied with a different transaction',
      );
      expect(await session.getItems()).to.deep.equal([item('a')]);
    });

    it('replaces a suffix only when the history still ends with it, in one step, keeping the replaced items in the log', async function () {
      const session = sessionWith();
      await session.addItems([user('q'), item('blocked')]);
      await expectRejects(
        session.applyHistoryTransaction({
          operationId: 'op-x',
          transaction: { type: 'replace_suffix', expectedSuffix: [item('something else')], replacement: [item('accepted')] },
        }),
        IllegalStateError,
        'no longer matches',
      );
      const replace = {
        operationId: 'op-2',
        transaction: { type: 'replace_suffix' as const, expectedSuffix: [item('blocked')], replacement: [item('accepted')] },
      };
      await session.applyHistoryTransaction(replace);
      await session.applyHistoryTransaction(replace);
      expect(await session.getItems()).to.deep.equal([user('q'), item('accepted')]);
      expect((await service.getEvents('s', EventFilter.all())).filter((e) => e.archived).map((e) => e.text)).to.deep.equal([
        'blocked',
      ]);
    });
  });

  describe('human approval across a lost acknowledgement, a compaction and a restart', function () {
    it('reconciles an append whose acknowledgement was lost: the resume succeeds, the tool runs once, nothing is compacted', async function () {
      const flaky = losingAcknowledgements(service);
      const strategy = new RecordingStrategy();
      let compactionWanted = false;
      const session = new CompactingSession({
        sessionService: flaky.service,
        sessionId: 's',
        logger: silent,
        compactionTrigger: () => compactionWanted,
        compactionStrategy: strategy,
      });
      let executed = 0;
      const agent = approvalAgent(new ScriptedModel([[functionCall('refund', {}, { callId: 'r1' })]]), async () => {
        executed++;
        return 'refunded';
      });
      const paused = await runner.run(agent, 'Refund me', { session });
      paused.state.approve(paused.interruptions[0]!);
      // From here on the trigger would fire: the receipt the failed append lost must keep the history as it is.
      compactionWanted = true;
      flaky.loseNext();
      await expectRejects(runner.run(agent, paused.state, { session }), Error, 'append acknowledgement lost');
      const committed = await session.getItems();
      const result = await runner.run(agent, paused.state, { session });
      expect(result.finalOutput).to.equal('refunded');
      expect(executed).to.equal(1);
      expect(await session.getItems()).to.deep.equal(committed);
      expect(committed.map((i) => ('role' in i ? i.role : i.type))).to.deep.equal([
        'user',
        'function_call',
        'function_call_result',
      ]);
      expect(strategy.runs).to.equal(0);
    });

    it('an approval survives a compaction and a process restart (new repository and session on the same SQLite file)', async function () {
      const dir = mkdtempSync(join(tmpdir(), 'agents-contract-'));
      try {
        const path = join(dir, 'sessions.db');
        const open = (repo: SessionRepository) =>
          new CompactingSession({
            repository: repo,
            sessionId: 'trip',
            logger: silent,
            compactionTrigger: () => true,
            compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: 1 }),
          });
        const first = new SqliteSessionRepository({ path });
        const model = () =>
          new ScriptedModel([
            [assistantMessage('Hello.')],
            [functionCall('refund', {}, { callId: 'r1' })],
            [assistantMessage('Refund done.')],
          ]);
        const agent = approvalAgent(model(), async () => 'refunded');
        const before = open(first);
        await runner.run(agent, 'Hi', { session: before });
        const paused = await runner.run(agent, 'Refund me', { session: before });
        // Compaction after the paused turn: everything older than the waiting call may go, the call stays.
        await before.runCompaction({ force: true });
        const saved = paused.state.toString();
        first.close();

        const second = new SqliteSessionRepository({ path });
        const after = open(second);
        const waiting = await after.getItems();
        expect(waiting.at(-1)).to.deep.include({ type: 'function_call', callId: 'r1' });
        expect(waiting.some((i) => (i as { type?: string }).type === 'function_call_result')).to.equal(false);
        const restored = await RunState.fromString(agent, saved);
        restored.approve(restored.getInterruptions()[0]!);
        const resumed = await runner.run(agent, restored, { session: after });
        expect(resumed.finalOutput).to.equal('refunded');
        const items = await after.getItems();
        const output = items.find((i) => (i as { type?: string }).type === 'function_call_result') as
          { output?: unknown } | undefined;
        expect(JSON.stringify(output?.output)).to.include('refunded');
        second.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('compaction after a run: only history the model has seen', function () {
    const compacting = (strategy: CompactionStrategy = new RecordingStrategy()) =>
      sessionWith({ compactionTrigger: () => true, compactionStrategy: strategy });

    it('compacts an uncontended run, and the summariser usage reaches the run usage once', async function () {
      const summarizer = new MeteredSummarizer();
      const session = compacting(
        new RecursiveSummarizationCompactionStrategy({
          chatClient: summarizer,
          maxEventsToKeep: 1,
          overlapSize: 0,
          logger: silent,
        }),
      );
      await session.addItems([user('earlier'), assistantMessage('earlier answer')]);
      const result = await runner.run(new Agent({ name: 'a', model: new ScriptedModel([[assistantMessage('done')]]) }), 'hello', {
        session,
      });
      expect(summarizer.calls).to.equal(1);
      const entries = (result.runContext.usage.requestUsageEntries ?? []).filter(
        (e) => e.endpoint === 'session-compaction.summarize',
      );
      expect(entries).to.have.length(1);
      expect(entries[0]).to.deep.include({ inputTokens: 70, outputTokens: 30, totalTokens: 100 });
      expect((await service.getEvents('s', EventFilter.active())).some((e) => e.isSynthetic())).to.equal(true);
    });

    it('a mechanical compaction calls no model: runCompaction returns null and the run usage is unchanged', async function () {
      const session = compacting();
      await session.addItems([user('earlier'), assistantMessage('earlier answer')]);
      expect(await session.runCompaction()).to.equal(null);
      expect(await session.getItems()).to.have.length.below(2);
    });

    it('never compacts history a sessionInputCallback left out of the model input', async function () {
      const strategy = new RecordingStrategy();
      const session = compacting(strategy);
      await session.addItems([user('private earlier history')]);
      const model = new ScriptedModel([[assistantMessage('done')]]);
      await runner.run(new Agent({ name: 'a', model }), 'hello', { session, sessionInputCallback: (_history, input) => input });
      expect(model.calls[0]!.request.input).to.deep.equal([user('hello')]);
      expect(strategy.runs).to.equal(0);
      expect((await session.getItems())[0]).to.deep.equal(user('private earlier history'));
    });

    it('never compacts history a callModelInputFilter left out or redacted', async function () {
      for (const redact of [false, true]) {
        const strategy = new RecordingStrategy();
        const session = compacting(strategy);
        await session.clearSession();
        await session.addItems([user('original private text')]);
        await runner.run(new Agent({ name: 'a', model: new ScriptedModel([[assistantMessage('done')]]) }), 'hello', {
          session,
          callModelInputFilter: ({ modelData }) => ({
            ...modelData,
            input: redact ? [user('redacted'), ...modelData.input.slice(1)] : modelData.input.slice(1),
          }),
        });
        expect(strategy.runs, redact ? 'redacted' : 'left out').to.equal(0);
      }
    });

    it('skips a run whose history read went stale (another write came in before the model call)', async function () {
      const strategy = new RecordingStrategy();
      const session = compacting(strategy);
      const other = sessionWith();
      await runner.run(new Agent({ name: 'a', model: new ScriptedModel([[assistantMessage('done')]]) }), 'hello', {
        session,
        sessionInputCallback: async (history, input) => {
          await other.addItems([user('concurrent write')]);
          return [...history, ...input];
        },
      });
      expect(strategy.runs).to.equal(0);
      expect((await session.getItems()).map((i) => (i as { content?: unknown }).content)).to.include('concurrent write');
    });

    it('skips a run whose history was popped or cleared in between', async function () {
      for (const mutation of ['pop', 'clear'] as const) {
        const strategy = new RecordingStrategy();
        const session = compacting(strategy);
        await session.addItems([user('original')]);
        await runner.run(new Agent({ name: 'a', model: new ScriptedModel([[assistantMessage('done')]]) }), 'hello', {
          session,
          sessionInputCallback: async (history, input) => {
            if (mutation === 'pop') await session.popItem();
            else await session.clearSession();
            return [...history, ...input];
          },
        });
        expect(strategy.runs, mutation).to.equal(0);
        await session.clearSession();
      }
    });

    it('does not compact after a failed model call', async function () {
      const strategy = new RecordingStrategy();
      const session = compacting(strategy);
      await session.addItems([user('retained')]);
      const model = new ScriptedModel([{ type: 'error', error: new Error('model failed') }]);
      await expectRejects(runner.run(new Agent({ name: 'a', model }), 'hello', { session }), Error, 'model failed');
      expect(strategy.runs).to.equal(0);
      expect((await session.getItems())[0]).to.deep.equal(user('retained'));
    });

    it('called by hand (no receipt), runCompaction runs the trigger; force runs the strategy whatever the trigger says', async function () {
      const strategy = new RecordingStrategy();
      const session = sessionWith({ compactionTrigger: () => false, compactionStrategy: strategy });
      await session.addItems([user('a'), user('b')]);
      await session.runCompaction();
      expect(strategy.runs).to.equal(0);
      await session.runCompaction({ force: true });
      expect(strategy.runs).to.equal(1);
    });
  });

  describe('on every backend', function () {
    for (const backend of allBackends()) {
      describe(backend.name, function () {
        before(async function () {
          await backend.setup(this);
        });
        after(() => backend.teardown());

        it('human approval: paused, the lost acknowledgement reconciled, resumed; no result ever invented', async function () {
          const base = new DefaultSessionService(backend.repository(), { logger: silent });
          const flaky = losingAcknowledgements(base);
          const session = new CompactingSession({
            sessionService: flaky.service,
            sessionId: `hitl-${Date.now()}`,
            logger: silent,
            compactionTrigger: () => true,
            compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: 1 }),
          });
          let executed = 0;
          const agent = approvalAgent(new ScriptedModel([[functionCall('refund', {}, { callId: 'r1' })]]), async () => {
            executed++;
            return 'refunded';
          });
          const paused = await runner.run(agent, 'Refund me', { session });
          expect((await session.getItems()).at(-1)).to.deep.include({ type: 'function_call', callId: 'r1' });
          paused.state.approve(paused.interruptions[0]!);
          flaky.loseNext();
          await expectRejects(runner.run(agent, paused.state, { session }), Error, 'append acknowledgement lost');
          const result = await runner.run(agent, paused.state, { session });
          expect(result.finalOutput).to.equal('refunded');
          expect(executed).to.equal(1);
          const results = (await session.getItems()).filter((i) => (i as { type?: string }).type === 'function_call_result');
          expect(results).to.have.length(1);
          expect(JSON.stringify(results[0])).to.include('refunded');
        });
      });
    }
  });
});
