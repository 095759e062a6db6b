import { expect } from 'chai';
import { Messages, SessionEvent, formatEvent, type TokenCountEstimator } from 'session-compaction';
import { estimateEventTokens, estimateEventsTokens } from 'session-compaction/spi';
import { A, CharEstimator, TC, U } from '../support/fixtures.js';

class CountingEstimator implements TokenCountEstimator {
  readonly seen: string[] = [];
  estimate(text: string): number {
    this.seen.push(text);
    return text.length;
  }
}

describe('estimateEventTokens', function () {
  it('estimates formatEvent(event), tool calls included', function () {
    const tc = TC();
    expect(estimateEventTokens(tc, new CharEstimator())).to.equal(formatEvent(tc).length);
  });

  it("counts a participant's name: a named message costs more than the same words unnamed", function () {
    const est = new CountingEstimator();
    const named = SessionEvent.create({ sessionId: 's', message: Messages.user('hello', { name: 'Caroline' }) });
    expect(estimateEventTokens(named, est)).to.equal('Caroline (user): hello'.length);
    expect(estimateEventTokens(named, est)).to.be.greaterThan(estimateEventTokens(U('hello'), est));
  });

  it('memoises per estimator: an event’s text is counted once across two calls', function () {
    const est = new CountingEstimator();
    const events = [U('hello'), A('world')];
    expect(estimateEventsTokens(events, est)).to.equal(27);
    expect(estimateEventsTokens(events, est)).to.equal(27);
    expect(est.seen).to.deep.equal(['User: hello', 'Assistant: world']);
  });

  it('a different event reusing the same id with different text is counted again', function () {
    const est = new CountingEstimator();
    const first = SessionEvent.create({ sessionId: 's', id: 'same-id', message: Messages.user('short') });
    const second = SessionEvent.create({ sessionId: 's', id: 'same-id', message: Messages.user('a much longer text') });
    expect(estimateEventTokens(first, est)).to.equal('User: short'.length);
    expect(estimateEventTokens(second, est)).to.equal('User: a much longer text'.length);
    expect(est.seen).to.deep.equal(['User: short', 'User: a much longer text']);
  });

  it('the memo is per (sessionId, id): the same id in two sessions is two entries', function () {
    const est = new CountingEstimator();
    const a = SessionEvent.create({ sessionId: 's1', id: 'e', message: Messages.user('x') });
    const b = SessionEvent.create({ sessionId: 's2', id: 'e', message: Messages.user('x') });
    estimateEventTokens(a, est);
    estimateEventTokens(b, est);
    expect(est.seen).to.have.length(2);
  });

  it('the memo is per estimator: another estimator counts for itself', function () {
    const one = new CountingEstimator();
    const two = new CountingEstimator();
    const e = U('shared');
    estimateEventTokens(e, one);
    estimateEventTokens(e, two);
    expect(one.seen).to.have.length(1);
    expect(two.seen).to.have.length(1);
  });

  it('an archived copy (same id and text) is a memo hit', function () {
    const est = new CountingEstimator();
    const e = U('archive me');
    estimateEventTokens(e, est);
    estimateEventTokens(e.asArchived(), est);
    expect(est.seen).to.have.length(1);
  });

  it('masking the same original again (a new copy id, the same text) is a memo hit; a different mask is counted', function () {
    const est = new CountingEstimator();
    const original = TC();
    const copy = (id: string, text: string) =>
      SessionEvent.create({
        sessionId: original.sessionId,
        id,
        message: Messages.user(text),
        metadata: { maskedFrom: original.id },
      });
    expect(estimateEventTokens(copy('copy-1', 'masked'), est)).to.equal('User: masked'.length);
    expect(estimateEventTokens(copy('copy-2', 'masked'), est)).to.equal('User: masked'.length);
    expect(estimateEventTokens(copy('copy-3', 'masked differently'), est)).to.equal('User: masked differently'.length);
    expect(est.seen).to.deep.equal(['User: masked', 'User: masked differently']);
  });
});

/** EVENT_TOKEN_CACHE_SIZE of src/tokens/eventTokens.ts (not a public name). */
const MEMO_SIZE = 100_000;

describe('estimateEventTokens memo eviction', function () {
  it('keeps the newest events and forgets the oldest first, on and on', function () {
    const est = new CharEstimator();
    const make = (i: number) => SessionEvent.create({ sessionId: 'evict', id: `e${i}`, message: Messages.user(`text ${i}`) });
    for (let i = 0; i < MEMO_SIZE + 10; i++) estimateEventTokens(make(i), est);
    const counted = est.seen.length;
    // A new object for a recent event is a hit (nothing estimated); one for an evicted event is counted again.
    estimateEventTokens(make(MEMO_SIZE + 5), est);
    expect(est.seen.length).to.equal(counted);
    estimateEventTokens(make(3), est);
    expect(est.seen.length).to.equal(counted + 1);
    // That insert evicted event 10, the oldest kept; event 12 is still there.
    estimateEventTokens(make(12), est);
    expect(est.seen.length).to.equal(counted + 1);
    estimateEventTokens(make(10), est);
    expect(est.seen.length).to.equal(counted + 2);
  });
});
