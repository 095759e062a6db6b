import { expect } from 'chai';
import { CompactionResult, InvalidArgumentError } from 'session-compaction';
import { U, expectThrows } from '../support/fixtures.js';

describe('CompactionResult', function () {
  it('refuses missing compacted or archived events, undefined as null', function () {
    for (const missing of [null, undefined]) {
      expectThrows(() => new CompactionResult(missing as never, [], 0), InvalidArgumentError, 'compactedEvents must not be null');
      expectThrows(() => new CompactionResult([], missing as never, 0), InvalidArgumentError, 'archivedEvents must not be null');
    }
  });

  it('carries a skip reason only when nothing was archived', function () {
    const [a, b] = [U('a'), U('b')];
    expect(new CompactionResult([a, b], [], 0, 'deferred').skipReason).to.equal('deferred');
    expect(new CompactionResult([b], [a], 1, 'deferred').skipReason).to.equal(undefined);
  });
});
