import { expect } from 'chai';
import fc from 'fast-check';
import { Messages, SessionEvent } from 'session-compaction';
import { planToolPairing, toolCallStates, toolExchangeOf, type ToolExchangeMessage } from 'session-compaction/spi';
import { firstPendingCall } from '../../src/session/toolCallPairing.js';
import { propertyParams } from '../support/arbitraries.js';

const user: ToolExchangeMessage = { role: 'user' };
const calls = (...ids: string[]): ToolExchangeMessage => ({ role: 'assistant', calls: ids });
const results = (...ids: string[]): ToolExchangeMessage => ({ role: 'tool', results: ids });

/** Any conversation over a few call ids, so reuse, orphans, duplicates and late results all occur. */
const anyExchange = fc.array(
  fc.oneof(
    fc.constant(user),
    fc.constant<ToolExchangeMessage>({ role: 'other' }),
    fc.uniqueArray(fc.constantFrom('a', 'b', 'c'), { minLength: 0, maxLength: 2 }).map((ids) => calls(...ids)),
    fc.array(fc.constantFrom('a', 'b', 'c', 'x'), { minLength: 1, maxLength: 2 }).map((ids) => results(...ids)),
  ),
  { maxLength: 12 },
);

describe('the pairing rule of tool calls and results', function () {
  it('a call with no result and nothing after it is pending: left as it is', function () {
    const plan = planToolPairing([user, calls('a')]);
    expect(plan.states.get('a')).to.equal('pending');
    expect(plan.unchanged).to.equal(true);
    expect(plan.inserts.size).to.equal(0);
  });

  it('a call a new user message follows without a result is abandoned: only it gets a placeholder', function () {
    const plan = planToolPairing([user, calls('a', 'b'), results('b'), user]);
    expect(plan.states.get('a')).to.equal('abandoned');
    expect(plan.states.get('b')).to.equal('answered');
    expect(plan.inserts.get(1)).to.deep.equal([{ callId: 'a', result: null }]);
  });

  it('a late result moves up to its call and wins over a placeholder', function () {
    const plan = planToolPairing([user, calls('a'), user, results('a')]);
    expect(plan.states.get('a')).to.equal('answered');
    expect(plan.results[3]).to.deep.equal(['move']);
    expect(plan.inserts.get(1)).to.deep.equal([{ callId: 'a', result: { message: 3, index: 0 } }]);
  });

  it('a result without a call before it is an orphan; a second result for one call a duplicate', function () {
    const plan = planToolPairing([results('x'), user, calls('a'), results('a'), results('a')]);
    expect(plan.results.map((r) => [...r])).to.deep.equal([['orphan'], [], [], ['keep'], ['duplicate']]);
  });

  it("with placement 'after-call' (the Responses API) a result anywhere after its call stays where it is", function () {
    const plan = planToolPairing([user, calls('a'), user, results('a')], { placement: 'after-call' });
    expect(plan.results[3]).to.deep.equal(['keep']);
    expect(plan.unchanged).to.equal(true);
  });

  it('a result carried first by the user message right after the call (the Messages API) is in place', function () {
    const plan = planToolPairing([user, calls('a'), { role: 'user', results: ['a'] }]);
    expect(plan.unchanged).to.equal(true);
  });

  it('reads log entries: only a turn start abandons a call (not a sub-agent user event nor a summary prompt)', function () {
    const call = SessionEvent.create({
      sessionId: 's',
      message: Messages.assistant(null, { toolCalls: [Messages.toolCall('a', 'f', '{}')] }),
    });
    const subAgent = SessionEvent.create({ sessionId: 's', message: Messages.user('research this'), branch: 'orch.researcher' });
    expect(toolCallStates([call, subAgent]).get('a')).to.equal('pending');
    expect(toolCallStates([call, SessionEvent.create({ sessionId: 's', message: Messages.user('next') })]).get('a')).to.equal(
      'abandoned',
    );
    expect(firstPendingCall([SessionEvent.create({ sessionId: 's', message: Messages.user('q') }), call, subAgent])).to.equal(1);
  });

  it('lists every call in order with the message making it, its state and the message answering it', function () {
    const plan = planToolPairing([user, calls('a', 'b'), results('a'), user, calls('c')]);
    expect(plan.calls).to.deep.equal([
      { id: 'a', at: 1, state: 'answered', answeredAt: 2 },
      { id: 'b', at: 1, state: 'abandoned', answeredAt: null },
      { id: 'c', at: 4, state: 'pending', answeredAt: null },
    ]);
  });

  it('a result behind other results of the same run stays where it is', function () {
    const plan = planToolPairing([user, calls('a', 'b'), results('b'), results('a')]);
    expect(plan.results.map((r) => [...r])).to.deep.equal([[], [], ['keep'], ['keep']]);
    expect(plan.unchanged).to.equal(true);
  });

  it('a user message carries results in place only right after the call; later it moves them up', function () {
    const plan = planToolPairing([user, calls('a', 'b'), results('b'), { role: 'user', results: ['a'] }]);
    expect(plan.results[3]).to.deep.equal(['move']);
    expect(plan.inserts.get(1)).to.deep.equal([{ callId: 'a', result: { message: 3, index: 0 } }]);
  });

  it('after a call, moved late results come before the placeholders, each group in call order', function () {
    const plan = planToolPairing([user, calls('a', 'b', 'c', 'd'), user, results('d'), results('b')]);
    expect(plan.inserts.get(1)).to.deep.equal([
      { callId: 'b', result: { message: 4, index: 0 } },
      { callId: 'd', result: { message: 3, index: 0 } },
      { callId: 'a', result: null },
      { callId: 'c', result: null },
    ]);
  });

  it('reads a log entry as the rule sees it: calls of an assistant, results of a tool message, who abandons', function () {
    const event = (message: Parameters<typeof SessionEvent.create>[0]['message'], branch?: string) =>
      SessionEvent.create({ sessionId: 's', message, ...(branch !== undefined ? { branch } : {}) });
    const call = Messages.assistant(null, { toolCalls: [Messages.toolCall('a', 'f', '{}'), Messages.toolCall('b', 'g', '{}')] });
    expect(toolExchangeOf(event(call))).to.deep.equal({ role: 'assistant', calls: ['a', 'b'] });
    expect(toolExchangeOf(event(Messages.assistant('plain')))).to.deep.equal({ role: 'assistant', calls: [] });
    const results = Messages.tool([Messages.toolResponse('a', 'f', 'ok'), Messages.toolResponse('b', 'g', 'ok')]);
    expect(toolExchangeOf(event(results))).to.deep.equal({ role: 'tool', results: ['a', 'b'] });
    expect(toolExchangeOf(event(Messages.user('next')))).to.deep.equal({ role: 'user' });
    expect(toolExchangeOf(Messages.user('next'))).to.deep.equal({ role: 'user' });
    expect(toolExchangeOf(event(Messages.user('research this'), 'orch.researcher'))).to.deep.equal({ role: 'other' });
    expect(toolExchangeOf(event(Messages.system('be brief')))).to.deep.equal({ role: 'other' });
  });

  it('the first pending call is the first call still waiting, not the first call; none gives -1', function () {
    const at = (message: Parameters<typeof SessionEvent.create>[0]['message']) =>
      SessionEvent.create({ sessionId: 's', message });
    const ask = at(Messages.user('q'));
    const answered = at(Messages.assistant(null, { toolCalls: [Messages.toolCall('a', 'f', '{}')] }));
    const result = at(Messages.tool([Messages.toolResponse('a', 'f', 'ok')]));
    const waiting = at(Messages.assistant(null, { toolCalls: [Messages.toolCall('b', 'f', '{}')] }));
    expect(firstPendingCall([ask, answered, result, waiting])).to.equal(3);
    expect(firstPendingCall([ask, answered, result])).to.equal(-1);
  });

  it('property: every call ends with at most one result, a placeholder only when abandoned, and none when pending', function () {
    fc.assert(
      fc.property(anyExchange, (messages) => {
        const plan = planToolPairing(messages);
        const lastUser = messages.map((m) => m.role).lastIndexOf('user');
        for (const call of plan.calls) {
          const kept = call.answeredAt === null ? 0 : 1;
          const inserted = (plan.inserts.get(call.at) ?? []).filter((i) => i.callId === call.id);
          if (call.state === 'pending') {
            expect(kept + inserted.length).to.equal(0);
            expect(lastUser).to.be.below(call.at);
          }
          if (call.state === 'abandoned') expect(inserted).to.deep.equal([{ callId: call.id, result: null }]);
          if (call.state === 'answered') expect(call.answeredAt).to.be.above(call.at);
        }
        // Every result is kept where it is, moved to its call, or left out — and a kept one is in place.
        plan.results.forEach((dispositions, m) =>
          dispositions.forEach((d) => {
            if (d !== 'keep') return;
            for (let j = m - 1; j >= 0 && (messages[j]!.calls ?? []).length === 0; j--)
              expect(messages[j]!.role).to.equal('tool');
          }),
        );
        const changed = plan.results.some((r) => r.some((d) => d !== 'keep')) || plan.inserts.size > 0;
        expect(plan.unchanged).to.equal(!changed);
      }),
      propertyParams(2000),
    );
  });
});
