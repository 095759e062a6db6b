import { expect } from 'chai';
import { InvalidArgumentError, Messages, SessionEvent, type Message } from 'session-compaction';
import { MESSAGE_TYPES, freezeMessage, hasToolCalls, isMessageType, messageText } from 'session-compaction/spi';
import { expectThrows } from '../support/fixtures.js';

/** The error SessionEvent.create gives for `message` (its messages name the field and the type received). */
const rejects = (message: unknown, expected: string) =>
  expectThrows(() => SessionEvent.create({ sessionId: 's', message: message as Message }), InvalidArgumentError, expected);
const call = { id: 'c1', type: 'function', name: 'f', arguments: '{}' };
const response = { id: 'c1', name: 'f', responseData: 'ok' };

describe('Message', function () {
  it('knows exactly the four message types', function () {
    expect([...MESSAGE_TYPES]).to.deep.equal(['user', 'assistant', 'system', 'tool']);
    for (const type of MESSAGE_TYPES) expect(isMessageType(type), type).to.equal(true);
    for (const other of ['function', '', 'User', undefined, null, 1, ['user']]) expect(isMessageType(other)).to.equal(false);
  });

  it('the searchable text is the text of user, system and assistant messages, and none for tool results', function () {
    expect(messageText(Messages.user('u'))).to.equal('u');
    expect(messageText(Messages.system('s'))).to.equal('s');
    expect(messageText(Messages.assistant('a'))).to.equal('a');
    expect(messageText(Messages.assistant(null))).to.equal(null);
    expect(messageText(Messages.tool([Messages.toolResponse('c1', 'f', 'data')]))).to.equal(null);
  });

  it('only an assistant message with at least one call has tool calls', function () {
    expect(hasToolCalls(Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'f', '{}')] }))).to.equal(true);
    expect(hasToolCalls(Messages.assistant('no calls'))).to.equal(false);
    expect(hasToolCalls({ type: 'assistant', text: null, toolCalls: [] })).to.equal(false);
    expect(hasToolCalls(Messages.tool([Messages.toolResponse('c1', 'f', 'r')]))).to.equal(false);
    expect(hasToolCalls(Messages.user('u'))).to.equal(false);
  });

  it('Messages.assistant leaves out an empty call list and keeps reasoning, even an empty one', function () {
    expect(Messages.assistant('a', { toolCalls: [] })).to.deep.equal({ type: 'assistant', text: 'a' });
    expect(Messages.assistant('a', { reasoning: '' })).to.deep.equal({ type: 'assistant', text: 'a', reasoning: '' });
    expect(Messages.assistant('a')).to.deep.equal({ type: 'assistant', text: 'a' });
  });

  describe('parsing a message from any caller', function () {
    it('keeps only the fields of its kind, deep-frozen', function () {
      const parsed = freezeMessage({ type: 'user', text: 'hi', extra: 1 } as unknown as Message);
      expect(parsed).to.deep.equal({ type: 'user', text: 'hi' });
      expect(Object.isFrozen(parsed)).to.equal(true);
      const system = freezeMessage({ type: 'system', text: 'be brief' });
      expect(system).to.deep.equal({ type: 'system', text: 'be brief' });
    });

    it('reads a missing or null assistant text as no text, and leaves out an empty call list and null reasoning', function () {
      expect(freezeMessage({ type: 'assistant' } as unknown as Message)).to.deep.equal({ type: 'assistant', text: null });
      expect(
        freezeMessage({ type: 'assistant', text: null, toolCalls: [], reasoning: null } as unknown as Message),
      ).to.deep.equal({
        type: 'assistant',
        text: null,
      });
      expect(freezeMessage({ type: 'assistant', text: 'a', toolCalls: null } as unknown as Message)).to.deep.equal({
        type: 'assistant',
        text: 'a',
      });
    });

    it('keeps tool calls (type defaults to function) and reasoning', function () {
      const parsed = freezeMessage({
        type: 'assistant',
        text: null,
        toolCalls: [{ id: 'c1', name: 'f', arguments: '{}' } as never],
        reasoning: 'because',
      });
      expect(parsed).to.deep.equal({
        type: 'assistant',
        text: null,
        toolCalls: [{ id: 'c1', type: 'function', name: 'f', arguments: '{}' }],
        reasoning: 'because',
      });
      expect(parsed.type === 'assistant' && Object.isFrozen(parsed.toolCalls![0])).to.equal(true);
    });

    it('rejects a missing message and one that is not an object', function () {
      rejects(null, 'message must not be null');
      rejects(undefined, 'message must not be null');
      rejects('hello', 'message must be an object (got string)');
      rejects(['user', 'hello'], 'message must be an object (got array)');
    });

    it('freezeMessage names the message in its errors', function () {
      expectThrows(
        () => freezeMessage({ type: 'user', text: 1 } as unknown as Message),
        InvalidArgumentError,
        'message.text must be a string (got number)',
      );
    });

    it('rejects an unknown type, naming it and the allowed ones', function () {
      rejects(
        { type: 'function', text: 'x' },
        'unknown message type: function (message.type must be one of user, assistant, system, tool)',
      );
      rejects({ text: 'x' }, 'unknown message type: undefined (message.type must be one of');
      rejects({ type: 3 }, 'unknown message type: number (message.type must be one of');
    });

    it('rejects a text that is not a string, naming the field', function () {
      rejects({ type: 'user', text: 1 }, 'message.text must be a string (got number)');
      rejects({ type: 'system' }, 'message.text must be a string (got undefined)');
      rejects({ type: 'assistant', text: {} }, 'message.text must be a string (got object)');
      rejects({ type: 'assistant', text: 'a', reasoning: 1 }, 'message.reasoning must be a string (got number)');
    });

    it('rejects malformed tool calls, naming the call and its field', function () {
      rejects({ type: 'assistant', text: null, toolCalls: 'f()' }, 'message.toolCalls must be an array (got string)');
      rejects({ type: 'assistant', text: null, toolCalls: [call, null] }, 'message.toolCalls[1] must be an object (got null)');
      rejects({ type: 'assistant', text: null, toolCalls: [[call]] }, 'message.toolCalls[0] must be an object (got array)');
      rejects(
        { type: 'assistant', text: null, toolCalls: [{ ...call, type: 'code' }] },
        "message.toolCalls[0].type must be 'function' (got string)",
      );
      rejects({ type: 'assistant', text: null, toolCalls: [{ ...call, id: 1 }] }, 'message.toolCalls[0].id must be a string');
      rejects({ type: 'assistant', text: null, toolCalls: [{ ...call, name: 1 }] }, 'message.toolCalls[0].name must be a string');
      rejects(
        { type: 'assistant', text: null, toolCalls: [{ ...call, arguments: {} }] },
        'message.toolCalls[0].arguments must be a string (got object)',
      );
    });

    it('rejects malformed tool responses, naming the response and its field', function () {
      rejects({ type: 'tool' }, 'message.responses must be an array (got undefined)');
      rejects({ type: 'tool', responses: [response, 'ok'] }, 'message.responses[1] must be an object (got string)');
      rejects({ type: 'tool', responses: [{ ...response, id: null }] }, 'message.responses[0].id must be a string (got null)');
      rejects({ type: 'tool', responses: [{ ...response, name: 2 }] }, 'message.responses[0].name must be a string');
      rejects(
        { type: 'tool', responses: [{ ...response, responseData: {} }] },
        'message.responses[0].responseData must be a string',
      );
    });
  });
});

describe('Messages', function () {
  describe("a participant's name", function () {
    it('is kept on user and assistant messages, by the factories and by parsing', function () {
      expect(Messages.user('hi', { name: 'Caroline' })).to.deep.equal({ type: 'user', text: 'hi', name: 'Caroline' });
      expect(Messages.assistant('hello', { name: 'Melanie' })).to.deep.equal({
        type: 'assistant',
        text: 'hello',
        name: 'Melanie',
      });
      expect(freezeMessage({ type: 'user', text: 'hi', name: 'Ann Lee' })).to.deep.equal({
        type: 'user',
        text: 'hi',
        name: 'Ann Lee',
      });
      expect(freezeMessage({ type: 'assistant', text: null, name: 'bot-1' })).to.deep.equal({
        type: 'assistant',
        text: null,
        name: 'bot-1',
      });
      // A null name is no name, as a null reasoning is none; a system message has no participant.
      expect(freezeMessage({ type: 'user', text: 'hi', name: null } as unknown as Message)).to.deep.equal({
        type: 'user',
        text: 'hi',
      });
      expect(freezeMessage({ type: 'system', text: 's', name: 'x' } as unknown as Message)).to.deep.equal({
        type: 'system',
        text: 's',
      });
    });

    it('is not part of the text that text filters match', function () {
      expect(messageText(Messages.user('hi', { name: 'Caroline' }))).to.equal('hi');
    });

    it('is refused when it is not a string, empty, longer than 64 characters, padded, or holds a line break or : ( ) [ ] < >', function () {
      rejects({ type: 'user', text: 'x', name: 42 }, 'message.name must be a string (got number)');
      rejects({ type: 'assistant', text: 'x', name: '' }, 'message.name must not be empty');
      rejects({ type: 'user', text: 'x', name: '   ' }, 'message.name must not be empty');
      rejects({ type: 'user', text: 'x', name: 'n'.repeat(65) }, 'message.name must be at most 64 characters (got 65)');
      rejects({ type: 'user', text: 'x', name: ' Caroline' }, 'message.name must not start or end with whitespace');
      rejects({ type: 'user', text: 'x', name: 'Caro\nline' }, 'message.name must not contain U+000A at index 4');
      rejects({ type: 'user', text: 'x', name: 'nul\u0000' }, 'message.name must not contain a NUL character');
      for (const c of [':', '(', ')', '[', ']', '<', '>'])
        rejects({ type: 'user', text: 'x', name: `a${c}b` }, `'${c}' at index 1`);
      expect(Messages.user('x', { name: 'n'.repeat(64) }).name).to.have.length(64);
    });
  });

  it('assistant keeps the tool calls given as options', function () {
    const call = Messages.toolCall('c1', 'lookup', '{}');
    expect(Messages.assistant(null, { toolCalls: [call] }).toolCalls).to.deep.equal([call]);
  });

  it('assistant(null, [toolCall]) makes a message with those tool calls (they used to be dropped)', function () {
    const calls = [Messages.toolCall('c1', 'lookup', '{}'), Messages.toolCall('c2', 'search', '{"q":"x"}')];
    const message = Messages.assistant(null, calls);
    expect(message).to.deep.equal({ type: 'assistant', text: null, toolCalls: calls });
    expect(hasToolCalls(message)).to.equal(true);
  });

  it('assistant refuses options that are not an object, naming what was given', function () {
    expectThrows(
      () => Messages.assistant('hi', 'reasoning' as never),
      InvalidArgumentError,
      'options must be an object or an array of tool calls, got',
    );
    expectThrows(
      () => Messages.assistant('hi', null as never),
      InvalidArgumentError,
      'options must be an object or an array of tool calls, got null',
    );
  });
});
