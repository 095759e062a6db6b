import { expect } from 'chai';
import { Messages, SessionEvent } from 'session-compaction';
import {
  ANTHROPIC_NATIVE_COMPACTION,
  OPENAI_NATIVE_COMPACTION,
  isNativeCompactionShadow,
  nativeCompactionPayload,
  nativeCompactionPlan,
  nativeCompactionRecord,
  withoutNativeCompaction,
} from 'session-compaction/spi';
import { SESSION_ID, U, nextId } from '../support/fixtures.js';

const PROVIDER = OPENAI_NATIVE_COMPACTION;

/** A synthetic event carrying `record` as it is stored (the metadata key is part of the stored format). */
function synthetic(type: 'user' | 'assistant', record: unknown, synthetic = true): SessionEvent {
  return SessionEvent.create({
    sessionId: SESSION_ID,
    id: nextId(),
    message: type === 'user' ? Messages.user('Summarise.') : Messages.assistant('The summary.'),
    metadata: { ...(synthetic ? { synthetic: true } : {}), nativeCompaction: record },
  });
}

const summary = (payload = '{"type":"compaction","id":"cmp_1"}', provider = PROVIDER) =>
  synthetic('assistant', { provider, payload });
const shadow = (provider = PROVIDER) => synthetic('user', { provider, payload: '"x"' });

describe('native compaction records', function () {
  it('reads a stored record of each provider under its stored names', function () {
    const openai = synthetic('assistant', { provider: 'openai-responses', payload: '[1,2]', model: 'gpt-x' });
    const anthropic = synthetic('assistant', { provider: 'anthropic-messages', payload: '{"a":1}' });
    expect(nativeCompactionRecord(openai)).to.deep.equal({ provider: 'openai-responses', payload: '[1,2]', model: 'gpt-x' });
    expect(nativeCompactionPayload(openai, OPENAI_NATIVE_COMPACTION)).to.deep.equal([1, 2]);
    expect(nativeCompactionPayload(anthropic, ANTHROPIC_NATIVE_COMPACTION)).to.deep.equal({ a: 1 });
  });

  it('ignores a malformed record: missing, not an object, without a provider or a text payload', function () {
    for (const record of [
      undefined,
      null,
      'openai-responses',
      42,
      { payload: '{}' },
      { provider: 7, payload: '{}' },
      { provider: PROVIDER },
      { provider: PROVIDER, payload: { a: 1 } },
    ]) {
      expect(nativeCompactionRecord(synthetic('assistant', record)), JSON.stringify(record)).to.equal(undefined);
      expect(nativeCompactionPayload(synthetic('assistant', record), PROVIDER), JSON.stringify(record)).to.equal(undefined);
    }
  });

  it('replays a payload only from a synthetic assistant event of the same provider, and only when it parses', function () {
    expect(nativeCompactionPayload(summary(), PROVIDER)).to.deep.equal({ type: 'compaction', id: 'cmp_1' });
    expect(nativeCompactionPayload(summary(), ANTHROPIC_NATIVE_COMPACTION)).to.equal(undefined);
    expect(nativeCompactionPayload(synthetic('user', { provider: PROVIDER, payload: '{}' }), PROVIDER)).to.equal(undefined);
    expect(nativeCompactionPayload(synthetic('assistant', { provider: PROVIDER, payload: '{}' }, false), PROVIDER)).to.equal(
      undefined,
    );
    expect(nativeCompactionPayload(summary('{not json'), PROVIDER)).to.equal(undefined);
  });

  it('gives a fresh copy of the payload on every read', function () {
    const event = summary('{"items":[1]}');
    const first = nativeCompactionPayload(event, PROVIDER) as { items: number[] };
    first.items.push(2);
    expect(nativeCompactionPayload(event, PROVIDER)).to.deep.equal({ items: [1] });
  });

  it('recognises the shadow prompt of a native pair of the same provider only', function () {
    expect(isNativeCompactionShadow(shadow(), PROVIDER)).to.equal(true);
    expect(isNativeCompactionShadow(shadow(ANTHROPIC_NATIVE_COMPACTION), PROVIDER)).to.equal(false);
    expect(isNativeCompactionShadow(summary(), PROVIDER)).to.equal(false);
    expect(isNativeCompactionShadow(synthetic('user', { provider: PROVIDER }, false), PROVIDER)).to.equal(false);
    for (const record of [undefined, null, PROVIDER]) {
      expect(isNativeCompactionShadow(synthetic('user', record), PROVIDER), String(record)).to.equal(false);
    }
  });

  it('redaction drops the record and keeps the rest of the metadata, without touching the original', function () {
    const metadata = { synthetic: true, nativeCompaction: { provider: PROVIDER, payload: '{}' }, k: 1 };
    expect(withoutNativeCompaction(metadata)).to.deep.equal({ synthetic: true, k: 1 });
    expect(metadata).to.have.property('nativeCompaction');
  });

  describe('nativeCompactionPlan', function () {
    it('maps each live summary of the provider to its payload and its shadow prompt right before it to null', function () {
      const items = [U('hi'), shadow(), summary(), U('next'), Messages.user('a plain message'), shadow(), summary('[3]')];
      const plan = nativeCompactionPlan(items, PROVIDER);
      expect([...plan.entries()].sort(([a], [b]) => a - b)).to.deep.equal([
        [1, null],
        [2, { type: 'compaction', id: 'cmp_1' }],
        [5, null],
        [6, [3]],
      ]);
    });

    it('leaves alone a summary of another provider, a shadow whose summary has no live payload, and a summary without a shadow', function () {
      const items = [
        shadow(),
        summary('{bad'),
        shadow(ANTHROPIC_NATIVE_COMPACTION),
        summary('{}', ANTHROPIC_NATIVE_COMPACTION),
        U('x'),
        summary('[1]'),
      ];
      expect([...nativeCompactionPlan(items, PROVIDER).entries()]).to.deep.equal([[5, [1]]]);
      expect([...nativeCompactionPlan([summary('[2]')], PROVIDER).entries()]).to.deep.equal([[0, [2]]]);
    });
  });
});
