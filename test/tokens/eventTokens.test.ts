import { expect } from 'chai';
import { Messages, SessionEvent, formatEvent, type TokenCountEstimator } from 'session-compaction';
import { estimateEventTokens, estimateEventsTokens } from 'session-compaction/spi';
import { A, CharEstimator, TC, U } from '../support/fixtures.js';

/** TEXT_TOKEN_CACHE_CHARS, TEXT_TOKEN_CACHE_SIZE and TEXT_TOKEN_CACHE_TOTAL_CHARS of src/tokens/eventTokens.ts (not public names). */
const TEXT_MEMO_CHARS = 4_000;
const TEXT_MEMO_SIZE = 10_000;
const TEXT_MEMO_TOTAL_CHARS = 2_000_000;

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

  it('the memo is per (sessionId, id): the same id in two sessions with different texts is two entries', function () {
    const est = new CountingEstimator();
    const a = SessionEvent.create({ sessionId: 's1', id: 'e', message: Messages.user('x') });
    const b = SessionEvent.create({ sessionId: 's2', id: 'e', message: Messages.user('yy') });
    expect(estimateEventTokens(a, est)).to.equal('User: x'.length);
    expect(estimateEventTokens(b, est)).to.equal('User: yy'.length);
    expect(estimateEventTokens(a, est)).to.equal('User: x'.length);
    expect(est.seen).to.deep.equal(['User: x', 'User: yy']);
  });

  it("a fork's copy (another session, the same id and text) is not tokenised again", function () {
    const est = new CountingEstimator();
    const original = SessionEvent.create({ sessionId: 'source', id: 'e1', message: Messages.user('forked words') });
    const copy = SessionEvent.create({ sessionId: 'fork', id: 'e1', message: Messages.user('forked words') });
    expect(estimateEventTokens(original, est)).to.equal('User: forked words'.length);
    expect(estimateEventTokens(copy, est)).to.equal('User: forked words'.length);
    expect(est.seen).to.deep.equal(['User: forked words']);
  });

  it('a message repeated under another id is counted once; the same words from another role are counted for themselves', function () {
    const est = new CountingEstimator();
    const say = (id: string, role: 'user' | 'assistant') =>
      SessionEvent.create({ sessionId: 's', id, message: role === 'user' ? Messages.user('ok') : Messages.assistant('ok') });
    estimateEventTokens(say('a', 'user'), est);
    estimateEventTokens(say('b', 'user'), est);
    estimateEventTokens(say('c', 'assistant'), est);
    expect(est.seen).to.deep.equal(['User: ok', 'Assistant: ok']);
  });

  it(`a text longer than ${TEXT_MEMO_CHARS} characters is remembered per event only: a copy under another id is counted again`, function () {
    const est = new CountingEstimator();
    const long = 'w'.repeat(TEXT_MEMO_CHARS);
    estimateEventTokens(SessionEvent.create({ sessionId: 's', id: 'a', message: Messages.user(long) }), est);
    estimateEventTokens(SessionEvent.create({ sessionId: 's', id: 'b', message: Messages.user(long) }), est);
    expect(est.seen).to.have.length(2);
  });

  it(`the memo by text holds at most ${TEXT_MEMO_SIZE} texts: past that it starts again, and an older text is counted again`, function () {
    const est = new CountingEstimator();
    const event = (id: string, text: string) => SessionEvent.create({ sessionId: 's', id, message: Messages.user(text) });
    estimateEventTokens(event('first', 'the first text'), est);
    for (let i = 0; i < TEXT_MEMO_SIZE; i++) estimateEventTokens(event(`e${i}`, `text ${i}`), est);
    const counted = est.seen.length;
    // The newest texts were kept after the clear; the first one was not.
    estimateEventTokens(event('again-newest', `text ${TEXT_MEMO_SIZE - 1}`), est);
    expect(est.seen).to.have.length(counted);
    estimateEventTokens(event('again-first', 'the first text'), est);
    expect(est.seen).to.have.length(counted + 1);
  });

  it(`the memo by text holds at most ${TEXT_MEMO_TOTAL_CHARS.toLocaleString('en')} characters: past that it starts again`, function () {
    const est = new CountingEstimator();
    const event = (id: string, text: string) => SessionEvent.create({ sessionId: 's', id, message: Messages.user(text) });
    estimateEventTokens(event('first', 'the first text'), est);
    const size = TEXT_MEMO_CHARS - 10;
    const texts = Math.ceil(TEXT_MEMO_TOTAL_CHARS / size);
    for (let i = 0; i < texts; i++) estimateEventTokens(event(`e${i}`, `${i} `.padEnd(size, 'x')), est);
    expect(texts).to.be.lessThan(TEXT_MEMO_SIZE);
    const counted = est.seen.length;
    estimateEventTokens(event('again-first', 'the first text'), est);
    expect(est.seen).to.have.length(counted + 1);
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
