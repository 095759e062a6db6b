import { expect } from 'chai';
import {
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  ObservationMaskingCompactionStrategy,
  SessionEvent,
  createDefaultLogger,
} from 'session-compaction';
import { METADATA_MASKED_FROM, maskExcerpt } from 'session-compaction/spi';
import { A, CharEstimator, SA, SU, U, compactionRequest, event, expectThrows } from '../../support/fixtures.js';
import { call, data, long, result } from '../../support/beyondEvents.js';

const masking = (options: ConstructorParameters<typeof ObservationMaskingCompactionStrategy>[0] = {}) =>
  new ObservationMaskingCompactionStrategy({ tokenCountEstimator: new CharEstimator(), ...options });

describe('ObservationMaskingCompactionStrategy', function () {
  it('replaces a consumed tool result by a head + tail excerpt of at most maxChars, in the same position', async function () {
    const big = 'HEAD-' + 'x'.repeat(3000) + '-TAIL';
    const events = [U('list files'), call('c1'), result('c1', big), A('There are many files.')];
    const r = await masking().compact(compactionRequest(events));
    expect(r.compactedEvents).to.have.length(4);
    const copy = r.compactedEvents[2]!;
    expect(data(copy).length).to.be.at.most(300);
    expect(data(copy).startsWith('HEAD-')).to.equal(true);
    expect(data(copy).endsWith('-TAIL')).to.equal(true);
    expect(data(copy)).to.contain('characters masked');
    expect(copy.id).to.not.equal(events[2]!.id);
    expect(copy.metadata[METADATA_MASKED_FROM]).to.equal(events[2]!.id);
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([events[2]!.id]);
    expect(copy.metadata.compactionSource).to.equal('observation-masking');
  });

  it('keeps the tool name and call id of a masked response', async function () {
    const events = [call('c9', 'grep'), result('c9', long('out'), 'grep'), A('found it')];
    const r = await masking().compact(compactionRequest(events));
    const m = r.compactedEvents[1]!.message;
    expect(m.type === 'tool' && m.responses[0]).to.include({ id: 'c9', name: 'grep' });
  });

  it('leaves an unconsumed tool result (no assistant message after it) intact', async function () {
    const events = [U('go'), call('c1'), result('c1', long('a')), A('ok'), call('c2'), result('c2', long('b'))];
    const r = await masking().compact(compactionRequest(events));
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([events[2]!.id]);
    expect(r.compactedEvents[5]).to.equal(events[5]);
  });

  it('never changes user, assistant or synthetic events, however long', async function () {
    const events = [
      SU(),
      SA(long('summary')),
      U(long('question')),
      A(long('answer')),
      call('c1'),
      result('c1', 'short'),
      A('done'),
    ];
    const r = await masking().compact(compactionRequest(events));
    expect(r.isNoop()).to.equal(true);
    expect(r.compactedEvents).to.deep.equal(events);
  });

  it('is a no-op on a window it has already masked (an excerpt is never masked again)', async function () {
    const events = [call('c1'), result('c1', long('a', 5000)), A('ok')];
    const first = await masking().compact(compactionRequest(events));
    const second = await masking().compact(compactionRequest(first.compactedEvents));
    expect(first.isNoop()).to.equal(false);
    expect(second.isNoop()).to.equal(true);
  });

  it('honours maxChars, and rejects one too small to hold the marker', async function () {
    const events = [call('c1'), result('c1', long('a', 5000)), A('ok')];
    const r = await masking({ maxChars: 1000 }).compact(compactionRequest(events));
    expect(data(r.compactedEvents[1]!).length).to.be.within(900, 1000);
    expect(masking({ maxChars: 80 }).maxChars).to.equal(80);
    expectThrows(() => masking({ maxChars: 50 }), InvalidArgumentError, 'maxChars must be at least 80');
    expectThrows(() => masking({ maxChars: 0 }), InvalidArgumentError, 'maxChars must be greater than 0');
  });

  it("with consumedBy 'assistant-text' a tool-call-only assistant message does not consume a result", async function () {
    const events = [call('c1'), result('c1', long('a')), call('c2'), result('c2', long('b')), A('both read')];
    const strict = await masking({ consumedBy: 'assistant-text' }).compact(compactionRequest(events.slice(0, 4)));
    const loose = await masking().compact(compactionRequest(events.slice(0, 4)));
    const strictAll = await masking({ consumedBy: 'assistant-text' }).compact(compactionRequest(events));
    expect(strict.isNoop()).to.equal(true);
    expect(loose.archivedEvents.map((e) => e.id)).to.deep.equal([events[1]!.id]);
    expect(strictAll.archivedEvents.map((e) => e.id)).to.deep.equal([events[1]!.id, events[3]!.id]);
    expectThrows(() => masking({ consumedBy: 'x' as never }), InvalidArgumentError, 'consumedBy');
  });

  it('counts consumption per branch: a root answer does not consume a sub-agent result', async function () {
    const sub = [
      event(Messages.assistant(null, { toolCalls: [Messages.toolCall('b1', 'bash', '{}')] }), { branch: 'agent' }),
      event(Messages.tool([Messages.toolResponse('b1', 'bash', long('b'))]), { branch: 'agent' }),
    ];
    const r = await masking().compact(compactionRequest([U('go'), ...sub, A('root reply')]));
    expect(r.isNoop()).to.equal(true);
  });

  it('masks each response of a multi-response tool message separately', async function () {
    const multi = event(Messages.tool([Messages.toolResponse('p1', 'a', long('one')), Messages.toolResponse('p2', 'b', 'tiny')]));
    const caller = event(
      Messages.assistant(null, { toolCalls: [Messages.toolCall('p1', 'a', '{}'), Messages.toolCall('p2', 'b', '{}')] }),
    );
    const r = await masking().compact(compactionRequest([caller, multi, A('ok')]));
    const m = r.compactedEvents[1]!.message;
    if (m.type !== 'tool') throw new Error('expected a tool message');
    expect(m.responses[0]!.responseData.length).to.be.at.most(300);
    expect(m.responses[1]!.responseData).to.equal('tiny');
  });

  it('reports the net saving: archived tokens minus the tokens of their masked copies', async function () {
    const events = [call('c1'), result('c1', long('a', 4000)), A('ok')];
    const r = await masking().compact(compactionRequest(events));
    const est = new CharEstimator();
    const fmt = (e: SessionEvent) => est.estimate(`Tool [responses: bash -> ${data(e)}]`);
    expect(r.tokensEstimatedSaved).to.equal(fmt(events[1]!) - fmt(r.compactedEvents[1]!));
  });

  it('through the service: the original stays readable (archived), the copy is active, the ledger holds', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: createDefaultLogger({ silent: true }) });
    const { id } = await service.create({ userId: 'u' });
    await service.appendMessage(id, Messages.user('list'));
    await service.appendMessage(id, Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'bash', '{}')] }));
    const original = await service.appendMessage(id, Messages.tool([Messages.toolResponse('c1', 'bash', long('ls', 5000))]));
    await service.appendMessage(id, Messages.assistant('Listed.'));
    await service.compact(id, () => true, new ObservationMaskingCompactionStrategy());
    const active = await service.getEvents(id, EventFilter.active());
    const all = await service.getEvents(id, EventFilter.all());
    expect(active.map((e) => e.messageType)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
    expect(active[2]!.metadata[METADATA_MASKED_FROM]).to.equal(original.id);
    expect(all.find((e) => e.id === original.id)).to.include({ archived: true });
    expect(data(all.find((e) => e.id === original.id)!)).to.equal(long('ls', 5000));
    expect((await service.verifyCoverage(id)).ok).to.equal(true);
  });
});

describe('maskExcerpt', function () {
  it('returns short text unchanged and never exceeds maxChars', function () {
    expect(maskExcerpt('short', 100)).to.equal('short');
    for (const n of [101, 150, 999, 10_000, 1_000_000]) expect(maskExcerpt('y'.repeat(n), 100).length).to.be.at.most(100);
  });

  it('leaves only the marker when maxChars has no room for any text', function () {
    expect(maskExcerpt('y'.repeat(500), 10)).to.equal('\n[… 500 of 500 characters masked …]\n');
  });
});
