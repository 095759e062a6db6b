import { expect } from 'chai';
import { Messages, ObservationMaskingCompactionStrategy } from 'session-compaction';
import { CharEstimator, U, compactionRequest, event } from '../../support/fixtures.js';
import { call, long, result } from '../../support/beyondEvents.js';

const masking = (options: ConstructorParameters<typeof ObservationMaskingCompactionStrategy>[0] = {}) =>
  new ObservationMaskingCompactionStrategy({ tokenCountEstimator: new CharEstimator(), ...options });

describe('ObservationMaskingCompactionStrategy: when a tool result counts as consumed', function () {
  it('masks a consumed result at the very start of the window (its call already compacted away)', async function () {
    const events = [result('c1', long('out')), event(Messages.assistant('read it')), U('next')];
    const r = await masking().compact(compactionRequest(events));
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([events[0]!.id]);
  });

  it("with consumedBy 'assistant-text' an assistant message of blank text does not consume a result", async function () {
    const events = [U('go'), call('c1'), result('c1', long('out')), event(Messages.assistant('   '))];
    const blank = await masking({ consumedBy: 'assistant-text' }).compact(compactionRequest(events));
    expect(blank.isNoop()).to.equal(true);
    const answered = [...events, event(Messages.assistant('done'))];
    const r = await masking({ consumedBy: 'assistant-text' }).compact(compactionRequest(answered));
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([events[2]!.id]);
  });

  it('never masks a pinned tool result, nor a synthetic one', async function () {
    const pinned = event(Messages.tool([Messages.toolResponse('c1', 'bash', long('out'))]), { metadata: { pinned: true } });
    const synthetic = event(Messages.tool([Messages.toolResponse('c2', 'bash', long('out'))]), { metadata: { synthetic: true } });
    const events = [U('go'), call('c1'), pinned, call('c2'), synthetic, event(Messages.assistant('done'))];
    const r = await masking().compact(compactionRequest(events));
    expect(r.isNoop()).to.equal(true);
  });
});
