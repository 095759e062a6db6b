import { expect } from 'chai';
import { InvalidArgumentError, Messages } from 'session-compaction';
import { expectThrows } from '../support/fixtures.js';

describe('Messages', function () {
  it('assistant keeps the tool calls given as options', function () {
    const call = Messages.toolCall('c1', 'lookup', '{}');
    expect(Messages.assistant(null, { toolCalls: [call] }).toolCalls).to.deep.equal([call]);
  });

  it('assistant refuses tool calls passed as an array instead of silently dropping them', function () {
    const call = Messages.toolCall('c1', 'lookup', '{}');
    expectThrows(
      () => Messages.assistant(null, [call] as never),
      InvalidArgumentError,
      'options must be an object: pass tool calls as { toolCalls: [...] }',
    );
  });

  it('assistant refuses options that are not an object, naming what was given', function () {
    expectThrows(() => Messages.assistant('hi', 'reasoning' as never), InvalidArgumentError, 'options must be an object, got');
    expectThrows(() => Messages.assistant('hi', null as never), InvalidArgumentError, 'options must be an object, got null');
  });
});
