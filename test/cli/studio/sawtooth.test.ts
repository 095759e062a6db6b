import { expect } from 'chai';
import {
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  SlidingWindowCompactionStrategy,
} from 'session-compaction';
import { sawtooth } from '../../../cli/src/studio/views/sawtooth.js';
import { CharEstimator } from '../../support/fixtures.js';
import { silentLogger } from '../../summarization/support.js';

describe('studio sawtooth', function () {
  const estimator = new CharEstimator();
  const tokens = (e: { text: string | null }) => (e.text ?? '').length;

  async function session(compactAfter: number[]) {
    const repository = new InMemorySessionRepository();
    const service = new DefaultSessionService(repository, { logger: silentLogger, tokenCountEstimator: estimator });
    await service.create({ id: 's', userId: 'u' });
    for (let i = 0; i < 8; i++) {
      await service.appendMessage('s', Messages.user(`message ${i}`), { timestamp: new Date(1000 * i), pinned: i === 0 });
      if (compactAfter.includes(i)) await service.compact('s', () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
    }
    return { repository, service };
  }

  it('rises by each event and ends at the active window the log holds now', async function () {
    const { repository, service } = await session([3, 6]);
    const records = await service.listCompactions!('s');
    expect(records).to.have.length(2);
    const points = sawtooth(await repository.findEvents('s'), records, tokens);
    const active = await repository.findEvents('s', EventFilter.active());
    expect(points[points.length - 1]!.tokens).to.equal(active.reduce((n, e) => n + tokens(e), 0));
  });

  it('drops right after the last event a compaction saw, in append order even when a pinned event sits after the archive', async function () {
    // The second compaction archives the first one's events ahead of the pinned first event in the log.
    const { repository, service } = await session([4, 7]);
    const log = await repository.findEvents('s');
    expect(log.findIndex((e) => e.isPinned())).to.be.greaterThan(0);
    const points = sawtooth(await repository.findEvents('s'), await service.listCompactions!('s'), tokens);
    const drop = points.findIndex((p) => p.compactionId !== null);
    // Five events (0..4) came in, then the compaction: its point is at step 5 and lower than the one before.
    expect(points[drop]!.step).to.equal(5);
    expect(points[drop]!.tokens).to.be.lessThan(points[drop - 1]!.tokens);
    expect(points.filter((p) => p.compactionId === null)).to.have.length(9);
    expect(points.filter((p) => p.compactionId !== null).map((p) => p.step)).to.deep.equal([5, 8]);
  });

  it('leaves a reverted compaction out', async function () {
    const { repository, service } = await session([4]);
    const [record] = await service.listCompactions!('s');
    await service.revertCompaction!('s', record!.id);
    const points = sawtooth(await repository.findEvents('s'), await service.listCompactions!('s'), tokens);
    expect(points.some((p) => p.compactionId !== null)).to.equal(false);
    expect(points.map((p) => p.tokens)).to.deep.equal([...points.map((p) => p.tokens)].sort((a, b) => a - b));
  });
});
