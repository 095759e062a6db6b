import { expect } from 'chai';
import { Messages } from 'session-compaction';
import { orphanedToolResponses } from '../../src/session/orphanedToolResponses.js';

const call = (id: string) => Messages.assistant(null, { toolCalls: [Messages.toolCall(id, 'f', '{}')] });
const result = (...ids: string[]) => Messages.tool(ids.map((id) => Messages.toolResponse(id, 'f', 'ok')));

describe('orphanedToolResponses', function () {
  it('finds none when every result follows its call', function () {
    expect(orphanedToolResponses([Messages.user('q'), call('c1'), result('c1'), Messages.assistant('done')])).to.deep.equal([]);
  });

  it('reports each result whose call is not earlier in the sequence, with its index', function () {
    const messages = [result('c0'), call('c1'), result('c1', 'c2'), Messages.user('q'), result('c3')];
    expect(orphanedToolResponses(messages)).to.deep.equal([
      { index: 0, toolCallId: 'c0' },
      { index: 2, toolCallId: 'c2' },
      { index: 4, toolCallId: 'c3' },
    ]);
  });

  it('a call that comes after its result does not make the result valid', function () {
    expect(orphanedToolResponses([result('c1'), call('c1')])).to.deep.equal([{ index: 0, toolCallId: 'c1' }]);
  });

  it('an assistant message without calls and user messages issue no calls', function () {
    expect(orphanedToolResponses([Messages.assistant('c1'), Messages.user('c1'), result('c1')])).to.deep.equal([
      { index: 2, toolCallId: 'c1' },
    ]);
  });
});
