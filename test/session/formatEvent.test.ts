import { expect } from 'chai';
import { Messages, formatEvent } from 'session-compaction';
import { A, SYS, TC, TR, U, event } from '../support/fixtures.js';

describe('formatEvent', function () {
  it('renders role word and text: "User: hello" is 11 characters, "Assistant: world" 16', function () {
    expect(formatEvent(U('hello'))).to.equal('User: hello');
    expect(formatEvent(U('hello'))).to.have.length(11);
    expect(formatEvent(A('world'))).to.equal('Assistant: world');
    expect(formatEvent(SYS('be brief'))).to.equal('System: be brief');
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
