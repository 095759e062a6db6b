import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { expect } from 'chai';
import { Messages, SessionEvent, type Message } from 'session-compaction';
import {
  DEFAULT_MISSING_TOOL_RESULT,
  fromAnthropicMessage,
  fromAnthropicPrompt,
  fromAnthropicReply,
  toAnthropicMessages,
  type AnthropicPrompt,
} from 'session-compaction/anthropic';
import { type PersistableMessage, decodeEvent, encodeEvent } from 'session-compaction/spi';

/** Entries as events that went through the storage codec (what a durable repository gives back). */
const stored = (entries: PersistableMessage[]): SessionEvent[] =>
  entries.map((e, i) =>
    decodeEvent(encodeEvent(SessionEvent.create({ sessionId: 's', id: `e${i}`, message: e.message, metadata: e.metadata }))),
  );

const roundTrip = (prompt: AnthropicPrompt) => toAnthropicMessages(stored(fromAnthropicPrompt(prompt)));

describe('Anthropic message conversion', function () {
  describe('log → Messages API', function () {
    it('separates system messages into `system`, in order', function () {
      const prompt = toAnthropicMessages([
        Messages.system('Be brief.'),
        Messages.user('hi'),
        Messages.system('Use metric units.'),
      ]);
      expect(prompt.system).to.deep.equal([
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'Use metric units.' },
      ]);
      expect(prompt.messages).to.deep.equal([{ role: 'user', content: 'hi' }]);
    });

    it('renders a tool call as tool_use and its results as tool_result blocks in the next user message', function () {
      const prompt = toAnthropicMessages([
        Messages.user('weather?'),
        Messages.assistant('Checking.', { toolCalls: [Messages.toolCall('t1', 'weather', '{"city":"Oslo"}')] }),
        Messages.tool([Messages.toolResponse('t1', 'weather', '12°C')]),
        Messages.assistant('12°C in Oslo.'),
      ]);
      expect(prompt.messages).to.deep.equal([
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 't1', name: 'weather', input: { city: 'Oslo' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '12°C' }] },
        { role: 'assistant', content: '12°C in Oslo.' },
      ]);
    });

    it('puts tool results first when a user message follows them, combining the two into one turn', function () {
      const prompt = toAnthropicMessages([
        Messages.assistant(null, { toolCalls: [Messages.toolCall('t1', 'f', '{}')] }),
        Messages.tool([Messages.toolResponse('t1', 'f', 'ok')]),
        Messages.user('thanks, now the next one'),
      ]);
      expect(prompt.messages[1]).to.deep.equal({
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'ok' },
          { type: 'text', text: 'thanks, now the next one' },
        ],
      });
    });

    it('leaves out a tool result whose call is not in the previous message (archived or filtered out)', function () {
      const prompt = toAnthropicMessages([Messages.tool([Messages.toolResponse('gone', 'f', 'orphan')]), Messages.user('hello')]);
      expect(prompt.messages).to.deep.equal([{ role: 'user', content: [{ type: 'text', text: 'hello' }] }]);
    });

    it('adds an is_error result for a tool call whose result was never recorded', function () {
      const prompt = toAnthropicMessages([
        Messages.user('go'),
        Messages.assistant(null, { toolCalls: [Messages.toolCall('t1', 'f', '{}'), Messages.toolCall('t2', 'g', '{}')] }),
        Messages.tool([Messages.toolResponse('t2', 'g', 'done')]),
        Messages.user('never mind'),
      ]);
      expect(prompt.messages[2]).to.deep.equal({
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't2', content: 'done' },
          { type: 'tool_result', tool_use_id: 't1', content: DEFAULT_MISSING_TOOL_RESULT, is_error: true },
          { type: 'text', text: 'never mind' },
        ],
      });
    });

    it('leaves a trailing tool call waiting for its result as it is: the next request brings the result', function () {
      const log = [Messages.user('go'), Messages.assistant(null, { toolCalls: [Messages.toolCall('t1', 'f', '{}')] })];
      expect(toAnthropicMessages(log).messages).to.have.length(2);
      const next = toAnthropicMessages([...log, Messages.tool([Messages.toolResponse('t1', 'f', 'done')])]).messages;
      expect(next[2]).to.deep.equal({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'done' }] });
    });

    it('answers a tool call the user moved on from with an is_error result (missingToolResult)', function () {
      const prompt = toAnthropicMessages(
        [
          Messages.user('go'),
          Messages.assistant(null, { toolCalls: [Messages.toolCall('t1', 'f', '{}')] }),
          Messages.user('stop'),
        ],
        { missingToolResult: 'interrupted' },
      );
      expect(prompt.messages[2]).to.deep.equal({
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'interrupted', is_error: true },
          { type: 'text', text: 'stop' },
        ],
      });
    });

    it('moves a late tool result up to its call, and never sends a placeholder beside it', function () {
      const prompt = toAnthropicMessages([
        Messages.user('go'),
        Messages.assistant(null, { toolCalls: [Messages.toolCall('t1', 'f', '{}')] }),
        Messages.user('still there?'),
        Messages.tool([Messages.toolResponse('t1', 'f', 'late but real')]),
      ]);
      expect(prompt.messages).to.deep.equal([
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: 'late but real' },
            { type: 'text', text: 'still there?' },
          ],
        },
      ]);
    });

    it('wraps tool arguments that are not a JSON object, since the API wants an object', function () {
      const prompt = toAnthropicMessages([Messages.assistant(null, { toolCalls: [Messages.toolCall('t1', 'f', 'not json')] })]);
      const blocks = prompt.messages[0]!.content as Array<{ type: string; input?: unknown }>;
      expect(blocks[0]!.input).to.deep.equal({ arguments: 'not json' });
    });

    it('never renders reasoning without a signature (another provider’s) as a thinking block', function () {
      const prompt = toAnthropicMessages([Messages.user('q'), Messages.assistant('a', { reasoning: 'because' })]);
      expect(prompt.messages[1]).to.deep.equal({ role: 'assistant', content: 'a' });
    });
  });

  describe('Messages API → log', function () {
    it('splits a user message with tool results and text into a tool entry and a user entry', function () {
      const entries = fromAnthropicMessage(
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: 'sunny' },
            { type: 'text', text: 'and tomorrow?' },
          ],
        },
        { resolveToolName: () => 'weather' },
      );
      expect(entries.map((e) => e.message)).to.deep.equal([
        Messages.tool([Messages.toolResponse('t1', 'weather', 'sunny')]),
        Messages.user('and tomorrow?'),
      ]);
    });

    it('keeps thinking as reasoning and tool_use as tool calls, with the signed blocks in metadata', function () {
      const [entry] = fromAnthropicMessage({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Need the weather.', signature: 'sig' },
          { type: 'tool_use', id: 't1', name: 'weather', input: { city: 'Oslo' } },
        ],
      });
      expect(entry!.message).to.deep.equal(
        Messages.assistant(null, {
          toolCalls: [Messages.toolCall('t1', 'weather', '{"city":"Oslo"}')],
          reasoning: 'Need the weather.',
        }),
      );
      expect(entry!.metadata).to.have.property('native');
    });

    it('stores a plain text message without metadata (nothing is lost converting it back)', function () {
      expect(fromAnthropicMessage({ role: 'user', content: 'hi' })).to.deep.equal([{ message: Messages.user('hi') }]);
      expect(fromAnthropicMessage({ role: 'assistant', content: 'hello' })).to.deep.equal([
        { message: Messages.assistant('hello') },
      ]);
    });

    it('marks images and documents in the searchable text and gives them back exactly', function () {
      const message: MessageParam = {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
          {
            type: 'image',
            source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
            cache_control: { type: 'ephemeral' },
          },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' }, title: 'Notes' },
        ],
      };
      const entries = fromAnthropicMessage(message);
      expect((entries[0]!.message as { text: string }).text).to.equal(
        'What is in this picture?\n[image: https://example.com/cat.png]\n[image: image/png]\n[document: Notes]',
      );
      expect(roundTrip({ messages: [message] }).messages).to.deep.equal([message]);
    });

    it('turns a reply into the param to send back: response-only nulls and the direct caller left out', function () {
      const entry = fromAnthropicReply({
        content: [
          { type: 'text', text: 'Let me check.', citations: null },
          { type: 'tool_use', id: 't1', name: 'f', input: {}, caller: { type: 'direct' } },
        ],
      });
      expect(toAnthropicMessages(stored([entry])).messages[0]).to.deep.equal({
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 't1', name: 'f', input: {} },
        ],
      });
    });

    it('falls back to the Message when a strategy rewrote the event (a masked tool result stays masked)', function () {
      const [entry] = fromAnthropicMessage({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'x'.repeat(500) }] }],
      });
      const original = stored([entry!])[0]!;
      const masked = original.with({ message: Messages.tool([Messages.toolResponse('t1', '', 'xxx[… masked …]')]) });
      const prompt = toAnthropicMessages([Messages.assistant(null, { toolCalls: [Messages.toolCall('t1', 'f', '{}')] }), masked]);
      expect(prompt.messages[1]).to.deep.equal({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 't1', content: 'xxx[… masked …]' }],
      });
    });
  });

  describe('thinking blocks', function () {
    const conversation: AnthropicPrompt = {
      messages: [
        { role: 'user', content: 'weather in Oslo?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should call the tool.', signature: 'sig-1' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'tool_use', id: 't1', name: 'weather', input: { city: 'Oslo' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '12°C' }] },
      ],
    };

    it('are sent back unchanged with their signatures (the API requires them on the tool-use turn)', function () {
      expect(roundTrip(conversation)).to.deep.equal(conversation);
    });

    it("are left out entirely with thinking: 'drop'", function () {
      const prompt = toAnthropicMessages(stored(fromAnthropicPrompt(conversation)), { thinking: 'drop' });
      expect((prompt.messages[1]!.content as Array<{ type: string }>).map((b) => b.type)).to.deep.equal(['tool_use']);
    });
  });

  it('gives a whole prompt back exactly: system blocks with cache control, every block kind used', function () {
    const prompt: AnthropicPrompt = {
      system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Search the docs.' }] },
        {
          role: 'assistant',
          content: [
            { type: 'server_tool_use', id: 'srv1', name: 'web_search', input: { query: 'docs' } },
            { type: 'web_search_tool_result', tool_use_id: 'srv1', content: [] },
            { type: 'text', text: 'Found nothing; ', citations: [] },
            { type: 'text', text: 'asking the tool.' },
            { type: 'tool_use', id: 't9', name: 'lookup', input: { q: 'docs', n: [1, 2] } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't9', content: [{ type: 'text', text: 'page 1' }], is_error: false },
            { type: 'search_result', source: 'https://d', title: 'D', content: [{ type: 'text', text: 'doc text' }] },
          ],
        },
        { role: 'assistant', content: 'Here it is.' },
      ],
    };
    expect(roundTrip(prompt)).to.deep.equal(prompt);
  });

  it('a masked or summarised log still gives a valid conversation (no empty assistant turn)', function () {
    const log: Message[] = [Messages.user('a'), Messages.assistant(null), Messages.user('b')];
    expect(toAnthropicMessages(log).messages).to.deep.equal([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
    ]);
  });
});
