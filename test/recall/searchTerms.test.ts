import { expect } from 'chai';
import { Messages, SessionEvent, type Message } from 'session-compaction';
import { isSearchable, searchableText } from '../../src/recall/searchTerms.js';

const event = (message: Message, metadata: Record<string, unknown> = {}) =>
  SessionEvent.create({ sessionId: 's', id: 'e', message, metadata });

describe('isSearchable', function () {
  const call = Messages.toolCall('c1', 'search', '{"q":"walrus"}');
  const cases: [string, SessionEvent, boolean][] = [
    ['a user message with text', event(Messages.user('the walrus')), true],
    ['a user message of whitespace', event(Messages.user(' \n\t')), false],
    ['a shadow prompt (synthetic user message)', event(Messages.user('Summarise this'), { synthetic: true }), false],
    ['a synthetic summary (assistant)', event(Messages.assistant('They met in May'), { synthetic: true }), true],
    ['an assistant message with text', event(Messages.assistant('sure')), true],
    ['an assistant message of whitespace and no tool call', event(Messages.assistant('  ')), false],
    ['an assistant message with no text and no tool call', event(Messages.assistant(null)), false],
    ['an assistant message with only a tool call', event(Messages.assistant(null, [call])), true],
    ['a tool result', event(Messages.tool([Messages.toolResponse('c1', 'search', ' ')])), true],
    ['a system message of whitespace', event(Messages.system(' ')), false],
  ];
  for (const [name, e, expected] of cases) {
    it(`${name}: ${expected ? 'searchable' : 'not searchable'}, and searchableText agrees`, function () {
      expect(isSearchable(e)).to.equal(expected);
      expect(searchableText(e) !== null).to.equal(expected);
    });
  }
});
