import { expect } from 'chai';
import {
  InvalidArgumentError,
  Messages,
  SessionEvent,
  fromOpenAIMessage,
  toOpenAIMessages,
  type Message,
} from 'session-compaction';
import { CharacterTokenCountEstimator, estimateEventTokens } from 'session-compaction/spi';

const conversation: Message[] = [
  Messages.system('be brief'),
  Messages.user('weather in Paris and Rome?'),
  Messages.assistant(null, {
    toolCalls: [
      Messages.toolCall('call-1', 'get_weather', '{"city":"Paris"}'),
      Messages.toolCall('call-2', 'get_weather', '{"city":"Rome"}'),
    ],
  }),
  Messages.tool([Messages.toolResponse('call-1', 'get_weather', '22C'), Messages.toolResponse('call-2', 'get_weather', '25C')]),
  Messages.assistant('Paris 22C, Rome 25C'),
];

describe('toOpenAIMessages / fromOpenAIMessage', function () {
  it('maps each role, tool calls included, and one tool message per ToolResponse', function () {
    const out = toOpenAIMessages(conversation);
    expect(out).to.deep.equal([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call-1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call-2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call-1', content: '22C' },
      { role: 'tool', tool_call_id: 'call-2', content: '25C' },
      { role: 'assistant', content: 'Paris 22C, Rome 25C' },
    ]);
  });

  it('accepts events as well as messages', function () {
    const events = conversation.map((message) => SessionEvent.create({ sessionId: 's', message }));
    expect(toOpenAIMessages(events)).to.deep.equal(toOpenAIMessages(conversation));
  });

  it('round-trips: from(to(m)) gives back every message, tool names recovered through resolveToolName', function () {
    const names = new Map([
      ['call-1', 'get_weather'],
      ['call-2', 'get_weather'],
    ]);
    const back = toOpenAIMessages(conversation).map((p) => fromOpenAIMessage(p, { resolveToolName: (id) => names.get(id) }));
    // The two tool messages come back as one-response tool messages.
    const expected: Message[] = [
      ...conversation.slice(0, 3),
      Messages.tool([Messages.toolResponse('call-1', 'get_weather', '22C')]),
      Messages.tool([Messages.toolResponse('call-2', 'get_weather', '25C')]),
      conversation[4]!,
    ];
    expect(back).to.deep.equal(expected);
    expect(toOpenAIMessages(back)).to.deep.equal(toOpenAIMessages(conversation));
  });

  it("passes a participant's name both ways, as OpenAI's `name`, with the characters OpenAI refuses sent as _", function () {
    const named = [Messages.user('hi', { name: 'Caroline' }), Messages.assistant('hello', { name: 'Melanie' })];
    expect(toOpenAIMessages(named)).to.deep.equal([
      { role: 'user', content: 'hi', name: 'Caroline' },
      { role: 'assistant', content: 'hello', name: 'Melanie' },
    ]);
    expect(toOpenAIMessages(named).map((p) => fromOpenAIMessage(p))).to.deep.equal(named);
    expect(() => fromOpenAIMessage({ role: 'user', content: 'hi', name: 'team:ops' })).to.throw(
      InvalidArgumentError,
      "message.name must not contain ':' at index 4",
    );
  });

  it("sends a participant's name in the only characters OpenAI accepts (^[a-zA-Z0-9_-]{1,64}$), or not at all", function () {
    const sent = (name: string) => toOpenAIMessages([Messages.user('hi', { name })])[0];
    expect(sent('Ann  Lee/ops')).to.deep.equal({ role: 'user', content: 'hi', name: 'Ann_Lee_ops' });
    expect(sent('Dr. Smith')).to.deep.equal({ role: 'user', content: 'hi', name: 'Dr_Smith' });
    expect(sent('José Ñúñez')).to.deep.equal({ role: 'user', content: 'hi', name: 'Jose_Nunez' });
    expect(sent('@bot-1')).to.deep.equal({ role: 'user', content: 'hi', name: '_bot-1' });
    // Nothing OpenAI could take is left: no name rather than an `_` every such name would share.
    expect(sent('李雷')).to.deep.equal({ role: 'user', content: 'hi' });
    const long = sent('a'.repeat(40) + ' ' + 'b'.repeat(40)) as { name?: string };
    expect(long.name).to.equal('a'.repeat(40) + '_' + 'b'.repeat(23));
    for (const name of ['Ann  Lee/ops', 'Dr. Smith', 'José Ñúñez', '@bot-1', 'a'.repeat(64)]) {
      expect((sent(name) as { name?: string }).name).to.match(/^[a-zA-Z0-9_-]{1,64}$/);
    }
  });

  it('fromOpenAIMessage reads content parts, developer messages and reasoning_content', function () {
    expect(
      fromOpenAIMessage({
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).to.deep.equal(Messages.user('ab'));
    expect(fromOpenAIMessage({ role: 'developer', content: 'rules' })).to.deep.equal(Messages.system('rules'));
    expect(fromOpenAIMessage({ role: 'assistant', content: 'x', reasoning_content: 'because' })).to.deep.equal(
      Messages.assistant('x', { reasoning: 'because' }),
    );
    expect(fromOpenAIMessage({ role: 'tool', tool_call_id: 'c9', content: 'r' })).to.deep.equal(
      Messages.tool([Messages.toolResponse('c9', '', 'r')]),
    );
  });
});

describe('toOpenAIMessages reasoning option', function () {
  const withReasoning = Messages.assistant('answer', { reasoning: 'because' });

  it("omits reasoning by default and sends it under the chosen field ('reasoning_content' or 'reasoning')", function () {
    expect(toOpenAIMessages([withReasoning])[0]).to.deep.equal({ role: 'assistant', content: 'answer' });
    expect(toOpenAIMessages([withReasoning], { reasoning: 'reasoning_content' })[0]).to.deep.equal({
      role: 'assistant',
      content: 'answer',
      reasoning_content: 'because',
    });
    expect(toOpenAIMessages([withReasoning], { reasoning: 'reasoning' })[0]).to.deep.equal({
      role: 'assistant',
      content: 'answer',
      reasoning: 'because',
    });
  });

  it('an estimator with countsReasoning counts the reasoning that is sent', function () {
    const e = SessionEvent.create({ sessionId: 's', message: withReasoning });
    const plain = new CharacterTokenCountEstimator();
    const counting = new CharacterTokenCountEstimator({ countReasoning: true });
    expect(estimateEventTokens(e, plain)).to.equal('Assistant: answer'.length);
    expect(estimateEventTokens(e, counting)).to.equal('Assistant: answer [reasoning: because]'.length);
  });

  it('rejects an unknown reasoning field', function () {
    expect(() => toOpenAIMessages([withReasoning], { reasoning: 'thoughts' as never })).to.throw(
      "reasoning must be 'omit', 'reasoning_content' or 'reasoning'",
    );
  });
});
