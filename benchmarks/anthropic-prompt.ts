// What AnthropicChatProvider.prompt() costs on a long history with a recall block ('auto' cache breakpoints):
// the current path, which renders the history once and reads the stable history end from that rendering,
// side by side with the previous one, which rendered the history before the recall block a second time
// and compared the two (test/support/anthropicStableEndReference.ts). Both give the same prompt (checked).
//
//   npx tsx benchmarks/anthropic-prompt.ts [--events 2000] [--rounds 15] [--calls 20]
//
// The history is shaped as AnthropicSessionMemory stores it: user text, assistant replies as content blocks
// (a tool_use or text; kept in their native form), tool results; the recall block sits before the last user
// message, where SessionMemory puts it by default. Each round times --calls calls of each path, alternating
// the order, after a warm-up; the figures are the medians over all calls.
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { isDeepStrictEqual } from 'node:util';
import { Messages, SessionEvent, type Message } from 'session-compaction';
import { AnthropicChatProvider, fromAnthropicMessage, type AnthropicChatParams } from 'session-compaction/anthropic';
import { syntheticMessages } from './src/scaling/syntheticSession.js';
import { anthropicPrompt } from '../src/providers/anthropic/AnthropicMessages.js';
import {
  countCacheBreakpoints,
  limitStoredBreakpoints,
  withCacheBreakpoints,
} from '../src/providers/anthropic/cacheBreakpoints.js';
import { METADATA_RECALL_BLOCK } from '../src/chat/recallSupport.js';
import { referenceStableHistoryEnd } from '../test/support/anthropicStableEndReference.js';
import { numberArg } from './support/args.js';

const EVENTS = numberArg('events', '2000');
const ROUNDS = numberArg('rounds', '15');
const CALLS = numberArg('calls', '20');

/** The Messages API form of a neutral message, as the client sent it or the API replied. */
function param(message: Message): MessageParam {
  switch (message.type) {
    case 'user':
      return { role: 'user', content: message.text };
    case 'assistant': {
      const text = message.text === null ? [] : [{ type: 'text' as const, text: message.text }];
      const calls = (message.toolCalls ?? []).map((c) => ({
        type: 'tool_use' as const,
        id: c.id,
        name: c.name,
        input: JSON.parse(c.arguments) as Record<string, unknown>,
      }));
      return { role: 'assistant', content: [...text, ...calls] };
    }
    case 'tool':
      return {
        role: 'user',
        content: message.responses.map((r) => ({ type: 'tool_result' as const, tool_use_id: r.id, content: r.responseData })),
      };
    default:
      throw new Error(`unexpected ${message.type}`);
  }
}

const history: SessionEvent[] = syntheticMessages(EVENTS, 11).flatMap((m) =>
  fromAnthropicMessage(param(m), { resolveToolName: () => 'lookup' }).map(({ message, metadata }) =>
    SessionEvent.create({ sessionId: 's', message, ...(metadata ? { metadata } : {}) }),
  ),
);
let lastUser = history.length - 1;
while (history[lastUser]!.messageType !== 'user') lastUser--;
history.splice(
  lastUser,
  0,
  SessionEvent.create({
    sessionId: 's',
    message: Messages.user('From earlier in this conversation:\n- the locker code is 4711'),
    metadata: { [METADATA_RECALL_BLOCK]: true },
  }),
);
const request: MessageParam[] = [{ role: 'user', content: 'What is my locker code?' }];
const params: AnthropicChatParams = { system: 'You answer questions about lockers.' };
const provider = new AnthropicChatProvider({} as never);

/** prompt() as it was: the same steps, the stable end from a second rendering. */
function previousPrompt(events: readonly SessionEvent[], messages: readonly MessageParam[], p: AnthropicChatParams) {
  countCacheBreakpoints({ ...(p.system === undefined ? {} : { system: p.system }), messages: [...messages] }, p);
  const limited = limitStoredBreakpoints(events, 0);
  const prompt = anthropicPrompt(limited.history, messages, p.system, {});
  return withCacheBreakpoints(prompt, p, referenceStableHistoryEnd(limited.history, prompt, {}));
}

const current = () => provider.prompt(history, request, params);
const previous = () => previousPrompt(history, request, params);
if (!isDeepStrictEqual(current(), previous())) throw new Error('the two paths give different prompts');

const times: Record<'current' | 'previous', number[]> = { current: [], previous: [] };
function time(name: 'current' | 'previous', run: () => unknown): void {
  for (let i = 0; i < CALLS; i++) {
    const started = process.hrtime.bigint();
    run();
    times[name].push(Number(process.hrtime.bigint() - started) / 1e6);
  }
}
for (let i = 0; i < 20; i++) (current(), previous());
for (let round = 0; round < ROUNDS; round++) {
  if (round % 2 === 0) (time('current', current), time('previous', previous));
  else (time('previous', previous), time('current', current));
}
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]!;
const line = (name: 'current' | 'previous') =>
  `${name.padEnd(8)} p50 ${quantile(times[name], 0.5).toFixed(2)} ms  p90 ${quantile(times[name], 0.9).toFixed(2)} ms`;
console.log(`prompt() over ${history.length} events (recall block before the last user message), ${ROUNDS * CALLS} calls each`);
console.log(line('previous'));
console.log(line('current'));
console.log(`p50 ratio previous / current: ${(quantile(times.previous, 0.5) / quantile(times.current, 0.5)).toFixed(2)}x`);
