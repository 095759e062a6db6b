import { expect } from 'chai';
import { InvalidArgumentError } from 'session-compaction';
import { toCompactionTrigger } from 'session-compaction/spi';
import { expectThrows } from '../support/fixtures.js';

describe('toCompactionTrigger', function () {
  it('takes a function or an object with shouldCompact, and refuses an object without it', function () {
    const shouldCompact = () => true;
    expect(toCompactionTrigger(shouldCompact).shouldCompact).to.equal(shouldCompact);
    const trigger = { shouldCompact };
    expect(toCompactionTrigger(trigger)).to.equal(trigger);
    expectThrows(() => toCompactionTrigger({} as never), InvalidArgumentError, 'trigger must not be null');
  });
});
