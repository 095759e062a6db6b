import { expect } from 'chai';
import { InvalidArgumentError, MessageFilter, Messages } from 'session-compaction';
import { expectThrows } from '../support/fixtures.js';

const user = Messages.user('hello');
const assistant = Messages.assistant('answer');
const system = Messages.system('rules');

describe('MessageFilter', function () {
  it('133: all() accepts user, assistant, system and an empty assistant message', function () {
    const f = MessageFilter.all();
    for (const m of [user, assistant, system, Messages.assistant('')]) expect(f.shouldPersist(m)).to.equal(true);
  });

  it('134: skipEmptyMessages rejects blank assistant messages without tool calls', function () {
    const f = MessageFilter.skipEmptyMessages();
    for (const m of [Messages.assistant(''), Messages.assistant('   '), Messages.assistant(null)])
      expect(f.shouldPersist(m)).to.equal(false);
  });

  it('134: skipEmptyMessages accepts real answers, tool-call-only assistants and empty user/system messages', function () {
    const f = MessageFilter.skipEmptyMessages();
    const toolOnly = Messages.assistant(null, { toolCalls: [Messages.toolCall('c', 'f', '{}')] });
    for (const m of [Messages.assistant('real answer'), toolOnly, Messages.user(''), Messages.system('')])
      expect(f.shouldPersist(m)).to.equal(true);
    expect(f.shouldPersist(Messages.tool([Messages.toolResponse('c', 'f', '')]))).to.equal(true);
  });

  it('135: byMessageType accepts the listed types only; no types is an error', function () {
    const f = MessageFilter.byMessageType('user', 'assistant');
    expect(f.shouldPersist(user)).to.equal(true);
    expect(f.shouldPersist(assistant)).to.equal(true);
    expect(f.shouldPersist(system)).to.equal(false);
    expectThrows(() => MessageFilter.byMessageType(), InvalidArgumentError, 'types must not be empty');
  });

  it('136: containsText is case-insensitive; null text is rejected; a blank keyword is an error', function () {
    const f = MessageFilter.containsText('SpRiNg');
    expect(f.shouldPersist(Messages.user('I love Spring AI'))).to.equal(true);
    expect(f.shouldPersist(Messages.user('I love Quarkus'))).to.equal(false);
    expect(f.shouldPersist(Messages.assistant(null))).to.equal(false);
    expectThrows(() => MessageFilter.containsText('  '), InvalidArgumentError, 'keyword must not be blank');
  });

  it('137: and / or / negate compose; a null operand is an error', function () {
    const answers = MessageFilter.byMessageType('assistant').and(MessageFilter.skipEmptyMessages());
    expect(answers.shouldPersist(Messages.assistant('answer'))).to.equal(true);
    expect(answers.shouldPersist(Messages.assistant(''))).to.equal(false);
    expect(answers.shouldPersist(user)).to.equal(false);
    const userOrSystem = MessageFilter.byMessageType('user').or(MessageFilter.byMessageType('system'));
    expect(userOrSystem.shouldPersist(user)).to.equal(true);
    expect(userOrSystem.shouldPersist(system)).to.equal(true);
    expect(userOrSystem.shouldPersist(assistant)).to.equal(false);
    const noSecrets = MessageFilter.containsText('secret').negate();
    expect(noSecrets.shouldPersist(Messages.user('the secret is 42'))).to.equal(false);
    expect(noSecrets.shouldPersist(Messages.user('nothing to hide'))).to.equal(true);
    expectThrows(() => MessageFilter.all().and(null as unknown as MessageFilter), InvalidArgumentError, 'other must not be null');
    expectThrows(() => MessageFilter.all().or(null as unknown as MessageFilter), InvalidArgumentError, 'other must not be null');
  });
});
