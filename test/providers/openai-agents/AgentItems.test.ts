import type { AgentInputItem } from '@openai/agents';
import { expect } from 'chai';
import { Messages, SessionEvent } from 'session-compaction';
import { DEFAULT_MISSING_FUNCTION_OUTPUT, pairAgentItems, toAgentItems } from 'session-compaction/openai-agents';

const user = (content: string): AgentInputItem => ({ role: 'user', content });
const call = (callId: string): AgentInputItem => ({ type: 'function_call', callId, name: 'f', arguments: '{}' });
const output = (callId: string, text = 'r'): AgentInputItem => ({
  type: 'function_call_result',
  callId,
  name: 'f',
  status: 'completed',
  output: text,
});

describe('Agents SDK items: the prompt side of the pairing rule', function () {
  it('leaves out an output without its call and a second output for one call', function () {
    expect(pairAgentItems([output('gone'), user('q'), call('c1'), output('c1'), output('c1', 'again')])).to.deep.equal([
      user('q'),
      call('c1'),
      output('c1'),
    ]);
  });

  it('answers only a call the user moved on from, right after it; a call still waiting stays as it is', function () {
    expect(pairAgentItems([user('q'), call('c1'), user('next'), call('c2')])).to.deep.equal([
      user('q'),
      call('c1'),
      { type: 'function_call_result', callId: 'c1', name: 'f', status: 'incomplete', output: DEFAULT_MISSING_FUNCTION_OUTPUT },
      user('next'),
      call('c2'),
    ]);
  });

  it('keeps a late output where it is: the Responses API takes an output anywhere after its call', function () {
    const items = [user('q'), call('c1'), user('next'), output('c1')];
    expect(pairAgentItems(items)).to.deep.equal(items);
  });

  it('toAgentItems reads a log as stored: a waiting call comes back without an output', function () {
    const log = [
      SessionEvent.create({ sessionId: 's', message: Messages.user('q') }),
      SessionEvent.create({
        sessionId: 's',
        message: Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'f', '{}')] }),
      }),
    ];
    expect(toAgentItems(log)).to.deep.equal([user('q'), call('c1')]);
  });
});
