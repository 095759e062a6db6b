/**
 * Where AnthropicChatProvider puts the history-end breakpoint when the history holds a recall block: read from
 * the one rendering of the prompt (the origin of each block), it is where the previous two-rendering
 * computation put it (test/support/anthropicStableEndReference.ts), through merging of same-role neighbours,
 * tool results moved ahead of text, orphan results left out and missing results added.
 */
import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { expect } from 'chai';
import fc from 'fast-check';
import { Messages, SessionEvent, type Message } from 'session-compaction';
import { AnthropicChatProvider, fromAnthropicMessage } from 'session-compaction/anthropic';
import { renderAnthropicPrompt } from '../../../src/providers/anthropic/AnthropicMessages.js';
import { stableHistoryEnd } from '../../../src/providers/anthropic/cacheBreakpoints.js';
import { METADATA_RECALL_BLOCK } from '../../../src/chat/recallSupport.js';
import { referenceStableHistoryEnd } from '../../support/anthropicStableEndReference.js';
import { propertyParams } from '../../support/arbitraries.js';

const EPHEMERAL = { type: 'ephemeral' };
const event = (message: Message) => SessionEvent.create({ sessionId: 's', message });
const recallBlock = (message: Message) =>
  SessionEvent.create({ sessionId: 's', message, metadata: { [METADATA_RECALL_BLOCK]: true } });
const blockCount = (content: MessageParam['content']) =>
  typeof content === 'string' ? (content === '' ? 0 : 1) : content.length;

/** Message and block of every block that carries cache_control. */
const marked = (messages: readonly MessageParam[]) =>
  messages.flatMap((m, message) =>
    typeof m.content === 'string'
      ? []
      : m.content.flatMap((b, block) => ('cache_control' in b && b.cache_control ? [[message, block]] : [])),
  );

describe('AnthropicChatProvider: the stable history end from one rendering', function () {
  it('with tool calls, merged same-role neighbours and a later tool result folded ahead of the recall block: the last call', function () {
    const calls = (...ids: string[]) => ids.map((id) => Messages.toolCall(id, 'lookup', `{"ticket":"${id}"}`));
    const history = [
      event(Messages.user('Find T-1 and T-2')),
      event(Messages.assistant('Looking.', { toolCalls: calls('t1', 't2') })),
      // Two tool messages and a user message: one user message, results first.
      event(Messages.tool([Messages.toolResponse('t1', 'lookup', 'T-1 is open')])),
      event(Messages.tool([Messages.toolResponse('t2', 'lookup', 'T-2 is closed')])),
      event(Messages.user('And the owners?')),
      // Two assistant messages: one assistant message.
      event(Messages.assistant('T-1 is open, T-2 closed.')),
      event(Messages.assistant(null, { toolCalls: calls('t3') })),
      recallBlock(Messages.user('From earlier: Ann owns T-0.')),
      // t3's result comes after the recall block and goes ahead of it in the same user message.
      event(Messages.tool([Messages.toolResponse('t3', 'lookup', 'Bob owns T-1')])),
    ];
    const prompt = new AnthropicChatProvider({} as never).prompt(history, [{ role: 'user', content: 'Who owns T-2?' }], {});
    expect(prompt.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(prompt.messages[3]!.content).to.deep.equal([
      { type: 'text', text: 'T-1 is open, T-2 closed.' },
      { type: 'tool_use', id: 't3', name: 'lookup', input: { ticket: 't3' }, cache_control: EPHEMERAL },
    ]);
    expect(prompt.messages[4]!.content).to.deep.equal([
      { type: 'tool_result', tool_use_id: 't3', content: 'Bob owns T-1' },
      { type: 'text', text: 'From earlier: Ann owns T-0.' },
      { type: 'text', text: 'Who owns T-2?' },
    ]);
    expect(marked(prompt.messages)).to.deep.equal([[3, 1]]);
    const unmarked = renderAnthropicPrompt(history, [{ role: 'user', content: 'Who owns T-2?' }], undefined);
    expect(referenceStableHistoryEnd(history, unmarked.prompt, {})).to.deep.equal({ message: 3, block: 1 });
  });

  describe('property: the same position as the two-rendering computation, on any history', function () {
    const ids = fc.constantFrom('t1', 't2', 't3');
    const text = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('a', 'b', 'hello', 'done') },
      { weight: 1, arbitrary: fc.constant('') },
    );
    const signed = fc.record({ type: fc.constant('thinking' as const), thinking: text, signature: fc.constantFrom('', 'sig') });
    const nativeAssistant = fc
      .tuple(fc.array(signed, { maxLength: 1 }), fc.array(text, { maxLength: 2 }), fc.uniqueArray(ids, { maxLength: 2 }))
      .map(([thinking, texts, uses]): MessageParam => {
        const content: ContentBlockParam[] = [
          ...thinking,
          ...texts.map((t) => ({ type: 'text' as const, text: t })),
          ...uses.map((id) => ({ type: 'tool_use' as const, id, name: 'lookup', input: { id } })),
        ];
        return { role: 'assistant', content: content.length === 0 ? 'ok' : content };
      });
    const nativeUser = fc
      .array(
        fc.oneof(
          text.map((t) => ({ type: 'text' as const, text: t })),
          ids.map((id) => ({ type: 'tool_result' as const, tool_use_id: id, content: `result ${id}` })),
        ),
        { minLength: 1, maxLength: 3 },
      )
      .map((content): MessageParam => ({ role: 'user', content }));
    const fromNative = (param: MessageParam) =>
      fromAnthropicMessage(param, { resolveToolName: () => 'lookup' }).map(({ message, metadata }) =>
        SessionEvent.create({ sessionId: 's', message, ...(metadata ? { metadata } : {}) }),
      );
    const item: fc.Arbitrary<SessionEvent[]> = fc.oneof(
      text.map((t) => [event(Messages.user(t))]),
      text.map((t) => [event(Messages.assistant(t))]),
      fc
        .tuple(fc.option(text, { nil: null }), fc.uniqueArray(ids, { minLength: 1, maxLength: 3 }))
        .map(([t, calls]) => [
          event(Messages.assistant(t, { toolCalls: calls.map((id) => Messages.toolCall(id, 'lookup', `{"id":"${id}"}`)) })),
        ]),
      fc
        .uniqueArray(ids, { minLength: 1, maxLength: 2 })
        .map((answered) => [event(Messages.tool(answered.map((id) => Messages.toolResponse(id, 'lookup', `result ${id}`))))]),
      text.map((t) => [event(Messages.system(t))]),
      nativeAssistant.map(fromNative),
      nativeUser.map(fromNative),
    );
    const request = fc.array(
      fc.oneof(
        text.map((t): MessageParam => ({ role: 'user', content: t })),
        nativeUser,
        nativeAssistant,
      ),
      { maxLength: 2 },
    );
    const scenario = fc.record({
      items: fc.array(item, { maxLength: 12 }).map((xs) => xs.flat()),
      recall: fc.option(fc.tuple(fc.nat(), fc.constantFrom(Messages.user('recalled'), Messages.system('recalled'))), {
        nil: null,
      }),
      request,
      thinking: fc.constantFrom('keep' as const, 'drop' as const),
    });

    it('stableHistoryEnd reads from the origins what the second rendering found; origins cover every block', function () {
      fc.assert(
        fc.property(scenario, ({ items, recall, request: messages, thinking }) => {
          const history = [...items];
          if (recall !== null) history.splice(recall[0] % (history.length + 1), 0, recallBlock(recall[1]));
          const rendered = renderAnthropicPrompt(history, messages, undefined, { thinking });
          expect(rendered.origins.map((o) => o.length)).to.deep.equal(rendered.prompt.messages.map((m) => blockCount(m.content)));
          expect(stableHistoryEnd(history, rendered)).to.deep.equal(
            referenceStableHistoryEnd(history, rendered.prompt, { thinking }),
          );
        }),
        propertyParams(1000),
      );
    });
  });
});
