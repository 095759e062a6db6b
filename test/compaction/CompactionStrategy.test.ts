import { expect } from 'chai';
import { CompactionResult, InvalidArgumentError, type CompactionRequest } from 'session-compaction';
import { toCompactionStrategy } from 'session-compaction/spi';
import { expectThrows } from '../support/fixtures.js';

describe('toCompactionStrategy', function () {
  it('takes a function or an object with compact, and refuses an object without it', function () {
    const compact = async (r: CompactionRequest) => CompactionResult.noop(r.events);
    expect(toCompactionStrategy(compact).compact).to.equal(compact);
    const strategy = { compact };
    expect(toCompactionStrategy(strategy)).to.equal(strategy);
    expectThrows(() => toCompactionStrategy({} as never), InvalidArgumentError, 'strategy must not be null');
  });
});
