import { expect } from 'chai';
import { Messages, formatEvent, type Message } from 'session-compaction';
import { formatMessage } from 'session-compaction/spi';
import { A, SYS, TC, TR, U, event } from '../support/fixtures.js';

describe('formatEvent', function () {
  it('renders role word and text: "User: hello" is 11 characters, "Assistant: world" 16', function () {
    expect(formatEvent(U('hello'))).to.equal('User: hello');
    expect(formatEvent(U('hello'))).to.have.length(11);
    expect(formatEvent(A('world'))).to.equal('Assistant: world');
    expect(formatEvent(SYS('be brief'))).to.equal('System: be brief');
  });

  it('a named participant\'s message starts with the name and keeps its role: "Caroline (user): hi"', function () {
    expect(formatEvent(event(Messages.user('hi', { name: 'Caroline' })))).to.equal('Caroline (user): hi');
    expect(formatEvent(event(Messages.assistant('hello', { name: 'Melanie' })))).to.equal('Melanie (assistant): hello');
    const call = event(Messages.assistant(null, { name: 'bot', toolCalls: [Messages.toolCall('c1', 'a', '{}')] }));
    expect(formatEvent(call)).to.equal('bot (assistant) [tool calls: a({})]');
  });

  it('a null assistant text renders "[no text content]"', function () {
    expect(formatEvent(A(null))).to.equal('Assistant: [no text content]');
  });

  it('tool calls render as name(arguments) joined by ", ", with or without text', function () {
    expect(formatEvent(TC())).to.equal('Assistant [tool calls: get_weather({"location":"Paris"})]');
    const two = event(
      Messages.assistant('Checking', {
        toolCalls: [Messages.toolCall('c1', 'a', '{}'), Messages.toolCall('c2', 'b', '{"x":1}')],
      }),
    );
    expect(formatEvent(two)).to.equal('Assistant: Checking [tool calls: a({}), b({"x":1})]');
    const blank = event(Messages.assistant('   ', { toolCalls: [Messages.toolCall('c1', 'a', '{}')] }));
    expect(formatEvent(blank)).to.equal('Assistant [tool calls: a({})]');
  });

  it('tool responses render as name -> data joined by ", "', function () {
    expect(formatEvent(TR())).to.equal('Tool [responses: get_weather -> {"temp":"22C"}]');
    const two = event(Messages.tool([Messages.toolResponse('1', 'a', 'x'), Messages.toolResponse('2', 'b', 'y')]));
    expect(formatEvent(two)).to.equal('Tool [responses: a -> x, b -> y]');
  });
});

describe('formatMessage: reasoning and messages without text', function () {
  const withReasoning = Messages.assistant('answer', { reasoning: 'because' });

  it('renders reasoning only when asked to', function () {
    expect(formatMessage(withReasoning, { reasoning: true })).to.equal('Assistant: answer [reasoning: because]');
    expect(formatMessage(withReasoning)).to.equal('Assistant: answer');
    expect(formatMessage(withReasoning, {})).to.equal('Assistant: answer');
    expect(formatMessage(withReasoning, { reasoning: false })).to.equal('Assistant: answer');
    expect(formatMessage(withReasoning, null as never)).to.equal('Assistant: answer');
  });

  it('renders no reasoning block for an empty or missing reasoning', function () {
    expect(formatMessage(Messages.assistant('answer', { reasoning: '' }), { reasoning: true })).to.equal('Assistant: answer');
    expect(formatMessage(Messages.assistant('answer'), { reasoning: true })).to.equal('Assistant: answer');
  });

  it('puts the reasoning after the tool calls', function () {
    const m = Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'f', '{}')], reasoning: 'r' });
    expect(formatMessage(m, { reasoning: true })).to.equal('Assistant [tool calls: f({})] [reasoning: r]');
  });

  it('a user or system message without a text (from a plain JavaScript caller) renders as no text content', function () {
    expect(formatMessage({ type: 'user', text: null } as unknown as Message)).to.equal('User: [no text content]');
    expect(formatMessage({ type: 'system' } as unknown as Message)).to.equal('System: [no text content]');
  });
});
