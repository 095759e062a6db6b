import { expect } from 'chai';
import sinon from 'sinon';
import {
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  SlidingWindowCompactionStrategy,
  createDefaultLogger,
  type CompactionRequest,
} from 'session-compaction';
import { messageText, type CompactionSkipReason } from 'session-compaction/spi';

const silent = createDefaultLogger({ silent: true });

describe('DefaultSessionService.compact with a known window', function () {
  let repository: InMemorySessionRepository;
  let service: DefaultSessionService;
  let sessionId: string;
  beforeEach(async function () {
    repository = new InMemorySessionRepository();
    service = new DefaultSessionService(repository, { logger: silent });
    sessionId = (await service.create({ userId: 'u' })).id;
    for (const text of ['a', 'b', 'c']) await service.appendMessage(sessionId, Messages.user(text));
  });
  const knownWindow = async () => ({
    session: (await service.findById(sessionId))!,
    events: await service.getEvents(sessionId, EventFilter.active()),
  });

  it('an unfired trigger reads nothing from storage and reports trigger-not-fired', async function () {
    const known = await knownWindow();
    const spies = ['findById', 'getEventVersion', 'findEvents'].map((m) => sinon.spy(repository, m as 'findById'));
    const reasons: CompactionSkipReason[] = [];
    service.events.on('compactionSkipped', (e) => reasons.push(e.reason));
    const result = await service.compact(sessionId, () => false, new SlidingWindowCompactionStrategy({ maxEvents: 1 }), {
      knownWindow: known,
    });
    expect(result.archivedEvents).to.have.length(0);
    expect(result.compactedEvents.map((e) => messageText(e.message))).to.deep.equal(['a', 'b', 'c']);
    expect(spies.map((s) => s.callCount)).to.deep.equal([0, 0, 0]);
    expect(reasons).to.deep.equal(['trigger-not-fired']);
  });

  it('a fired trigger is asked again about the stored window, which the strategy compacts', async function () {
    const known = await knownWindow();
    // Appended after the caller's read: the stored window is what gets compacted, never the stale one.
    await service.appendMessage(sessionId, Messages.user('d'));
    const asked: number[] = [];
    const trigger = (r: CompactionRequest) => {
      asked.push(r.events.length);
      return true;
    };
    const result = await service.compact(sessionId, trigger, new SlidingWindowCompactionStrategy({ maxEvents: 1 }), {
      knownWindow: known,
    });
    expect(asked).to.deep.equal([3, 4]);
    expect(result.archivedEvents.map((e) => messageText(e.message))).to.deep.equal(['a', 'b', 'c']);
    expect((await service.getEvents(sessionId, EventFilter.active())).map((e) => messageText(e.message))).to.deep.equal(['d']);
  });

  it('refuses a known window of another session', async function () {
    const other = await service.create({ userId: 'u' });
    const known = { session: other, events: [] };
    await service
      .compact(sessionId, () => false, new SlidingWindowCompactionStrategy({ maxEvents: 1 }), { knownWindow: known })
      .then(
        () => expect.fail('accepted'),
        (error: Error) => expect(error.message).to.equal('knownWindow.session must be the Session being compacted'),
      );
  });
});
