import { expect } from 'chai';
import { DefaultSessionService, InMemorySessionRepository, Messages, SlidingWindowCompactionStrategy } from 'session-compaction';
import { compactionStatsHooks, compactionStatsOf } from 'session-compaction/telemetry';
import { CharEstimator } from '../support/fixtures.js';
import { silentLogger } from '../summarization/support.js';

describe('compactionStatsHooks', function () {
  it('counts committed compactions and adds up archived events and tokens saved in the session metadata', async function () {
    const est = new CharEstimator();
    const service = new DefaultSessionService(new InMemorySessionRepository(), {
      logger: silentLogger,
      tokenCountEstimator: est,
    });
    service.addCompactionHooks(compactionStatsHooks(service, () => new Date('2026-01-02T03:04:05.000Z')));
    const { id } = await service.create({ userId: 'u', metadata: { keep: 'me' } });
    const strategy = new SlidingWindowCompactionStrategy({ maxEvents: 2, tokenCountEstimator: est });
    let saved = 0;
    let archived = 0;
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3; i++) {
        await service.appendMessage(id, Messages.user(`q${round}.${i}`));
        await service.appendMessage(id, Messages.assistant(`a${round}.${i}`));
      }
      const result = await service.compact(id, () => true, strategy);
      saved += result.tokensEstimatedSaved;
      archived += result.eventsRemoved;
    }
    await service.compact(id, () => false, strategy); // not committed: not counted
    const session = (await service.findById(id))!;
    expect(compactionStatsOf(session)).to.deep.equal({
      count: 3,
      eventsArchived: archived,
      tokensSaved: saved,
      lastCompactedAt: '2026-01-02T03:04:05.000Z',
    });
    expect(session.metadata.keep).to.equal('me');
  });
});
