import { expect } from 'chai';
import fc from 'fast-check';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { Messages, SessionEvent, toOpenAIMessages, type Message } from 'session-compaction';
import {
  MISSING_TOOL_RESULT,
  pairOpenAIToolMessages,
  planToolPairing,
  toolExchangeOf,
  type ToolPairingRepair,
} from 'session-compaction/spi';
import { openAIPairingError } from '../../support/fakeOpenAIServer.js';

const CALL_IDS = ['c1', 'c2', 'c3', 'c4'];

/** Any log: calls and results drawn from a few ids, so every kind of orphan, duplicate and interleaving occurs. */
const anyMessage: fc.Arbitrary<Message> = fc.oneof(
  fc.string({ maxLength: 3 }).map((t) => Messages.user(t)),
  fc.string({ maxLength: 3 }).map((t) => Messages.system(t)),
  fc.option(fc.string({ maxLength: 3 }), { nil: null }).map((t) => Messages.assistant(t)),
  fc
    .tuple(
      fc.option(fc.string({ maxLength: 3 }), { nil: null }),
      fc.uniqueArray(fc.constantFrom(...CALL_IDS), { minLength: 1, maxLength: 3 }),
    )
    .map(([t, ids]) => Messages.assistant(t, { toolCalls: ids.map((id) => Messages.toolCall(id, 'f', '{}')) })),
  fc
    .array(fc.constantFrom(...CALL_IDS), { minLength: 1, maxLength: 3 })
    .map((ids) => Messages.tool(ids.map((id) => Messages.toolResponse(id, 'f', `result ${id}`)))),
);

const anyLog = fc
  .array(anyMessage, { maxLength: 14 })
  .map((messages) => messages.map((message, i) => SessionEvent.create({ sessionId: 's', id: `e${i}`, message })));

/** A log a well-behaved client writes: each call answered right after it. */
const pairedLog = fc
  .array(
    fc.oneof(
      fc.string({ maxLength: 3 }).map((t) => [Messages.user(t)]),
      fc.string({ maxLength: 3 }).map((t) => [Messages.assistant(t)]),
      fc
        .uniqueArray(fc.constantFrom(...CALL_IDS), { minLength: 1, maxLength: 3 })
        .map((ids) => [
          Messages.assistant(null, { toolCalls: ids.map((id) => Messages.toolCall(id, 'f', '{}')) }),
          Messages.tool(ids.map((id) => Messages.toolResponse(id, 'f', `r ${id}`))),
        ]),
    ),
    { maxLength: 8 },
  )
  .map((groups) => groups.flat().map((message, i) => SessionEvent.create({ sessionId: 's', id: `p${i}`, message })));

function recorder(): {
  logger: { warn: (m: string, meta?: Record<string, unknown>) => void; error(): void; info(): void; debug(): void };
  warnings: Array<Record<string, unknown>>;
} {
  const warnings: Array<Record<string, unknown>> = [];
  return { warnings, logger: { warn: (_m, meta) => warnings.push(meta ?? {}), error() {}, info() {}, debug() {} } };
}

describe('tool pairing in prompts', function () {
  it('property: any log followed by a new user message becomes a prompt the API accepts', function () {
    fc.assert(
      fc.property(anyLog, (log) => {
        const { logger } = recorder();
        const next = SessionEvent.create({ sessionId: 's', id: 'next', message: Messages.user('next') });
        const prompt = toOpenAIMessages([...log, next], { logger });
        expect(openAIPairingError({ messages: prompt as never })).to.equal(null);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: a placeholder answers only a call the user moved on from, never one still waiting; no call gets two results', function () {
    fc.assert(
      fc.property(anyLog, (log) => {
        const prompt = toOpenAIMessages(log, { logger: recorder().logger });
        const answered = new Map<string, number>();
        prompt.forEach((m, i) => {
          if (m.role !== 'tool') return;
          answered.set(m.tool_call_id, (answered.get(m.tool_call_id) ?? 0) + 1);
          // A placeholder only where a new user message follows the call (the user moved on).
          if (m.content === MISSING_TOOL_RESULT) expect(prompt.slice(i).some((later) => later.role === 'user')).to.equal(true);
        });
        // A call the prompt leaves unanswered is one still waiting: no user message after it.
        const waiting = planToolPairing(log.map(toolExchangeOf)).calls.some((c) => c.state === 'pending');
        if (!waiting) expect(openAIPairingError({ messages: prompt as never })).to.equal(null);
        // A call id may be reused by a later call: each call is answered at most once in its own run.
        const calls = prompt.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
        for (const [id, n] of answered) expect(n, id).to.be.at.most(calls.filter((c) => c === id).length);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: only repairs change the prompt — every other message is kept in order, and each repair is logged at warn with its event id', function () {
    fc.assert(
      fc.property(anyLog, (log) => {
        const { logger, warnings } = recorder();
        const raw = toOpenAIMessages(log, { pairToolMessages: false });
        const repairs: ToolPairingRepair[] = [];
        const prompt = toOpenAIMessages(log, { logger });
        pairOpenAIToolMessages(raw, { onRepair: (r) => repairs.push(r) });
        expect(warnings.length).to.equal(repairs.length);
        const ids = new Set(log.map((e) => e.id));
        for (const w of warnings) expect(ids.has(w.eventId as string), JSON.stringify(w)).to.equal(true);
        // Placeholders added, orphans and duplicates left out, moved results counted once: the rest is the input.
        const count = (kind: ToolPairingRepair['kind']) => repairs.filter((r) => r.kind === kind).length;
        expect(prompt.length).to.equal(raw.length - count('orphan-result') - count('duplicate-result') + count('missing-result'));
        const nonTool = (ms: ChatCompletionMessageParam[]) => ms.filter((m) => m.role !== 'tool');
        expect(nonTool(prompt)).to.deep.equal(nonTool(raw));
        expect(prompt.filter((m) => m.role === 'tool' && m.content === MISSING_TOOL_RESULT).length).to.equal(
          count('missing-result'),
        );
      }),
      { numRuns: 1000 },
    );
  });

  it('property: a log whose calls are all answered is sent unchanged, and nothing is logged', function () {
    fc.assert(
      fc.property(pairedLog, (log) => {
        const { logger, warnings } = recorder();
        expect(toOpenAIMessages(log, { logger })).to.deep.equal(toOpenAIMessages(log, { pairToolMessages: false }));
        expect(warnings).to.deep.equal([]);
      }),
      { numRuns: 500 },
    );
  });

  it('a result whose call was archived is left out; a call whose result never came is answered with a placeholder', function () {
    const { logger, warnings } = recorder();
    const log = [
      SessionEvent.create({ sessionId: 's', id: 'orphan', message: Messages.tool([Messages.toolResponse('gone', 'f', 'x')]) }),
      SessionEvent.create({ sessionId: 's', id: 'u', message: Messages.user('hi') }),
      SessionEvent.create({
        sessionId: 's',
        id: 'call',
        message: Messages.assistant(null, { toolCalls: [Messages.toolCall('c9', 'f', '{}')] }),
      }),
      SessionEvent.create({ sessionId: 's', id: 'u2', message: Messages.user('and?') }),
    ];
    expect(toOpenAIMessages(log, { logger })).to.deep.equal([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c9', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c9', content: MISSING_TOOL_RESULT },
      { role: 'user', content: 'and?' },
    ]);
    expect(warnings).to.deep.equal([
      { eventId: 'orphan', toolCallId: 'gone' },
      { eventId: 'call', toolCallId: 'c9' },
    ]);
  });
});
