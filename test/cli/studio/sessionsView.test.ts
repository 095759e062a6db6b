import { expect } from 'chai';
import {
  CompactionProfileRegistry,
  DefaultSessionService,
  defaultTokenCountEstimator,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  RepositoryRetriever,
  SlidingWindowCompactionStrategy,
  type SessionRepository,
} from 'session-compaction';
import { estimateEventsTokens } from 'session-compaction/spi';
import type { StudioContext } from '../../../cli/src/studio/StudioContext.js';
import { listSessionPage } from '../../../cli/src/studio/views/sessionsView.js';
import { silentLogger } from '../../summarization/support.js';

function contextOf(repository: SessionRepository): StudioContext {
  const estimator = defaultTokenCountEstimator();
  return {
    repository,
    service: new DefaultSessionService(repository, { logger: silentLogger, tokenCountEstimator: estimator }),
    estimator,
    contextWindowTokens: 8000,
    retriever: new RepositoryRetriever({ repository }),
    recall: {},
    profiles: CompactionProfileRegistry.withBuiltIns(),
    chatClient: { call: async () => null },
    allowWrites: false,
    where: 'memory',
    logger: silentLogger,
  };
}

/** The repository without its listing: what a store without SessionListingRepository (Redis) offers. */
function withoutListing(repository: InMemorySessionRepository): SessionRepository {
  return new Proxy(repository, { get: (target, key) => (key === 'listSessions' ? undefined : Reflect.get(target, key, target)) });
}

describe('studio sessions page', function () {
  let repository: InMemorySessionRepository;

  beforeEach(async () => {
    repository = new InMemorySessionRepository();
    const service = new DefaultSessionService(repository, { logger: silentLogger });
    for (const [id, user] of [
      ['a1', 'ann'],
      ['a2', 'ann'],
      ['b1', 'bob'],
    ]) {
      await service.create({ id: id!, userId: user! });
      for (let i = 0; i < 5; i++) await service.appendMessage(id!, Messages.user(`${id} message ${i}`));
    }
    await service.compact('a2', () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
  });

  it('counts each listed session’s active tokens as the triggers do', async function () {
    const ctx = contextOf(repository);
    const { sessions } = await listSessionPage(ctx, { cursor: null, userId: null, idPrefix: null });
    const expected = await Promise.all(
      ['a1', 'a2', 'b1'].map(async (id) =>
        estimateEventsTokens(await repository.findEvents(id, EventFilter.active()), ctx.estimator),
      ),
    );
    expect(sessions.map((s) => s.activeTokens)).to.deep.equal(expected);
  });

  it('without the store’s listing, lists the same sessions with the same sizes and standing compactions', async function () {
    const fast = await listSessionPage(contextOf(repository), { cursor: null, userId: null, idPrefix: null });
    const slow = await listSessionPage(contextOf(withoutListing(repository)), { cursor: null, userId: null, idPrefix: null });
    const sizes = (page: typeof fast) =>
      page.sessions.map((s) => [
        s.session.id,
        s.activeEvents,
        s.archivedEvents,
        s.activeTokens,
        s.lastEventAt?.getTime(),
        s.compactions,
      ]);
    expect(sizes(slow)).to.deep.equal(sizes(fast));
    expect(slow.sessions.find((s) => s.session.id === 'a2')?.compactions).to.equal(1);
  });

  it('without the store’s listing, filters by user and id prefix and pages with the cursor', async function () {
    const ctx = contextOf(withoutListing(repository));
    const ann = await listSessionPage(ctx, { cursor: null, userId: 'ann', idPrefix: null, limit: 1 });
    expect(ann.sessions.map((s) => s.session.id)).to.deep.equal(['a1']);
    const next = await listSessionPage(ctx, { cursor: ann.cursor, userId: 'ann', idPrefix: null, limit: 1 });
    expect(next.sessions.map((s) => s.session.id)).to.deep.equal(['a2']);
    expect(next.cursor).to.equal(null);
    const b = await listSessionPage(ctx, { cursor: null, userId: null, idPrefix: 'b' });
    expect(b.sessions.map((s) => s.session.id)).to.deep.equal(['b1']);
  });
});
