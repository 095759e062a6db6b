import {
  AIMessage,
  ChatMessage,
  FunctionMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
} from '@langchain/core/messages';
import { expect } from 'chai';
import fc from 'fast-check';
import { Messages, SessionEvent } from 'session-compaction';
import { fromLangChainMessage, pairToolMessages, langChainMessagesOf, toLangChainMessages } from 'session-compaction/langchain';
import { decodeEvent, encodeEvent } from 'session-compaction/spi';
import { encodeNative } from '../../../src/chat/nativeMessages.js';
import { propertyParams } from '../../support/arbitraries.js';

const text = fc.string({ maxLength: 10 });
const id = fc.string({ minLength: 1, maxLength: 8 });
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 2 }),
    fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), tie('value'), { maxKeys: 2, noNullPrototype: true }),
  ),
})).value;
const kwargs = fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), json, { maxKeys: 2, noNullPrototype: true });
const rec = <T extends Record<string, fc.Arbitrary<unknown>>>(model: T, optional: Array<keyof T & string> = []) =>
  fc.record(model, {
    requiredKeys: Object.keys(model).filter((k) => !optional.includes(k)) as Array<keyof T & string>,
    noNullPrototype: true,
  });

const block = fc.oneof(
  rec({ type: fc.constant('text'), text }),
  rec({
    type: fc.constant('image_url'),
    image_url: fc.oneof(fc.webUrl(), rec({ url: fc.webUrl(), detail: fc.constantFrom('low', 'high') }, ['detail'])),
  }),
  rec({ type: fc.constant('image'), url: fc.webUrl(), mimeType: fc.constant('image/png') }, ['mimeType']),
  rec({ type: fc.constant('reasoning'), reasoning: text }),
);
const content = fc.oneof(text, fc.array(block, { maxLength: 3 }));
const common = { content, id, name: text, additional_kwargs: kwargs, response_metadata: kwargs };
const commonOptional = ['id', 'name', 'additional_kwargs', 'response_metadata'] as const;
const toolCall = rec({
  id,
  name: id,
  args: fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), json, { maxKeys: 2, noNullPrototype: true }),
  type: fc.constant('tool_call' as const),
});
const usage = rec({ input_tokens: fc.nat(), output_tokens: fc.nat(), total_tokens: fc.nat() });

/** One generator per message class LangChain persists. */
const messageArb: fc.Arbitrary<BaseMessage> = fc.oneof(
  rec(common, [...commonOptional]).map((f) => new HumanMessage(f as never)),
  rec(common, [...commonOptional]).map((f) => new SystemMessage(f as never)),
  rec(
    {
      ...common,
      tool_calls: fc.array(toolCall, { maxLength: 2 }),
      invalid_tool_calls: fc.array(
        rec({ id, name: id, args: text, error: text, type: fc.constant('invalid_tool_call' as const) }),
        { maxLength: 1 },
      ),
      usage_metadata: usage,
    },
    [...commonOptional, 'tool_calls', 'invalid_tool_calls', 'usage_metadata'],
  ).map((f) => new AIMessage(f as never)),
  rec({ ...common, tool_call_id: id, artifact: json, status: fc.constantFrom('success' as const, 'error' as const) }, [
    ...commonOptional,
    'artifact',
    'status',
  ]).map((f) => new ToolMessage(f as never)),
  rec({ ...common, name: id }, ['id', 'additional_kwargs', 'response_metadata']).map((f) => new FunctionMessage(f as never)),
  rec({ ...common, role: fc.constantFrom('user', 'assistant', 'system', 'critic') }, [...commonOptional]).map(
    (f) => new ChatMessage(f as never),
  ),
);

describe('property: LangChain messages → events → LangChain messages', function () {
  it('is lossless for every message class (same class, same serialised form), through the storage codec', function () {
    fc.assert(
      fc.property(messageArb, (message) => {
        const entry = fromLangChainMessage(message);
        const event = decodeEvent(
          encodeEvent(SessionEvent.create({ sessionId: 's', message: entry.message, metadata: entry.metadata })),
        );
        const back = langChainMessagesOf(event);
        expect(back).to.have.length(1);
        expect(back[0]!.constructor).to.equal(message.constructor);
        expect(encodeNative(back[0]!.toDict())).to.deep.equal(encodeNative(message.toDict()));
      }),
      propertyParams(400),
    );
  });
});

describe('LangChain message conversion', function () {
  it("a human or AI message's name is the participant's name of its event, and comes back from a Message that has one", function () {
    expect(fromLangChainMessage(new HumanMessage({ content: 'hi', name: 'Caroline' })).message).to.deep.equal(
      Messages.user('hi', { name: 'Caroline' }),
    );
    expect(fromLangChainMessage(new AIMessage({ content: 'hello', name: 'Melanie' })).message).to.deep.equal(
      Messages.assistant('hello', { name: 'Melanie' }),
    );
    const back = toLangChainMessages([
      Messages.user('hi', { name: 'Caroline' }),
      Messages.assistant('hello', { name: 'Melanie' }),
    ]);
    expect(back.map((m) => m.name)).to.deep.equal(['Caroline', 'Melanie']);
    // A name no message may carry stays only in LangChain's stored form, which gives it back as it was.
    const odd = fromLangChainMessage(new HumanMessage({ content: 'hi', name: 'team:ops' }));
    expect(odd.message).to.deep.equal(Messages.user('hi'));
    const event = SessionEvent.create({ sessionId: 's', message: odd.message, metadata: odd.metadata });
    expect(langChainMessagesOf(event)[0]!.name).to.equal('team:ops');
  });

  it('converts a log as it was stored: a call still waiting for its result comes back without one', function () {
    const messages = toLangChainMessages([
      Messages.user('q'),
      Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'f', '{"a":1}')] }),
    ]);
    expect(messages.map((m) => m.getType())).to.deep.equal(['human', 'ai']);
    expect((messages[1] as AIMessage).tool_calls).to.deep.equal([{ type: 'tool_call', id: 'c1', name: 'f', args: { a: 1 } }]);
  });

  it('pairToolMessages: an orphan result is left out, a late one moves up, only a call the user moved on from gets an error ToolMessage', function () {
    const log = toLangChainMessages([
      Messages.tool([Messages.toolResponse('gone', 'f', 'orphan')]),
      Messages.user('q'),
      Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'f', '{}'), Messages.toolCall('c2', 'g', '{}')] }),
      Messages.user('never mind'),
      Messages.tool([Messages.toolResponse('c2', 'g', 'late')]),
      Messages.assistant(null, { toolCalls: [Messages.toolCall('c3', 'f', '{}')] }),
    ]);
    const paired = pairToolMessages(log);
    expect(paired.map((m) => m.getType())).to.deep.equal(['human', 'ai', 'tool', 'tool', 'human', 'ai']);
    expect(paired[2]).to.equal(log[4]);
    expect((paired[3] as ToolMessage).tool_call_id).to.equal('c1');
    expect((paired[3] as ToolMessage).status).to.equal('error');
    // c3 waits for its result: the ToolMessage a tool loop sends next answers it.
    expect(paired.at(-1)).to.equal(log.at(-1));
  });

  it('refuses a RemoveMessage, which is an instruction rather than a message', async function () {
    const { RemoveMessage } = await import('@langchain/core/messages');
    expect(() => fromLangChainMessage(new RemoveMessage({ id: 'x' }))).to.throw('RemoveMessage');
  });
});
