import { expect } from 'chai';
import { IdleTimeTrigger, InvalidArgumentError, Messages } from 'session-compaction';
import type { IdleTimeTriggerOptions } from 'session-compaction/spi';
import { compactionRequest, event, expectThrows } from '../../support/fixtures.js';

const T0 = Date.parse('2025-01-01T12:00:00Z');
const at = (ms: number) => new Date(T0 + ms);
const said = (ms: number) => event(Messages.user('hi'), { timestamp: at(ms) });

describe('IdleTimeTrigger: options and boundaries', function () {
  it('rejects missing options with InvalidArgumentError, not a TypeError', function () {
    for (const options of [null, undefined]) {
      expectThrows(
        () => new IdleTimeTrigger(options as unknown as IdleTimeTriggerOptions),
        InvalidArgumentError,
        'options must not be null',
      );
    }
  });

  it('rejects an idleMs that is not a positive integer and a clock that is not a function', function () {
    expectThrows(() => new IdleTimeTrigger({ idleMs: 0 }), InvalidArgumentError, 'idleMs must be greater than 0');
    expectThrows(
      () => new IdleTimeTrigger({ idleMs: 10, now: 'now' as unknown as () => Date }),
      InvalidArgumentError,
      'now must be a function',
    );
  });

  it('fires at exactly idleMs', function () {
    const t = new IdleTimeTrigger({ idleMs: 1000, now: () => at(1000) });
    expect(t.shouldCompact(compactionRequest([said(0)]))).to.equal(true);
    expect(t.shouldCompact(compactionRequest([said(1)]))).to.equal(false);
  });

  it('measures from the newest event, whatever the order of the window', function () {
    const t = new IdleTimeTrigger({ idleMs: 1000, now: () => at(5000) });
    expect(t.idleFor(compactionRequest([said(4500), said(0)]))).to.equal(500);
    expect(t.idleFor(compactionRequest([]))).to.equal(null);
  });

  it('reads the real clock by default', function () {
    const t = new IdleTimeTrigger({ idleMs: 60_000 });
    expect(
      t.shouldCompact(compactionRequest([event(Messages.user('old'), { timestamp: new Date(Date.now() - 120_000) })])),
    ).to.equal(true);
    expect(t.shouldCompact(compactionRequest([event(Messages.user('new'), { timestamp: new Date() })]))).to.equal(false);
  });
});
