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
});
