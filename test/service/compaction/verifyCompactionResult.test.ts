/**
 * A strategy is a public extension point: the service checks every result before it writes, on every
 * backend, and refuses one that loses, duplicates or invents events with an IllegalStateError naming the
 * strategy. Nothing is written.
 */
import { expect } from 'chai';
import {
  CompactionResult,
  DefaultSessionService,
  EventFilter,
  IllegalStateError,
  Messages,
  SessionEvent,
  SlidingWindowCompactionStrategy,
  type CompactionRequest,
  type CompactionStrategy,
} from 'session-compaction';
import { allBackends } from '../../support/backends.js';
import { CharEstimator, expectRejects } from '../../support/fixtures.js';
import { silentLogger } from '../../summarization/support.js';

/** A custom strategy whose result is whatever `shape` makes of the window. */
class CustomStrategy implements CompactionStrategy {
  constructor(private readonly shape: (events: readonly SessionEvent[]) => CompactionResult) {}
  async compact(request: CompactionRequest): Promise<CompactionResult> {
    return this.shape(request.events);
  }
}

const BAD: Record<string, { shape: (w: readonly SessionEvent[]) => CompactionResult; message: string }> = {
  'real events neither kept nor archived (6 events → 2)': {
    shape: (w) => new CompactionResult(w.slice(4), w.slice(0, 1), 0),
    message: '3 event(s) of the window neither kept nor archived',
  },
  'an event both archived and kept': {
    shape: (w) => new CompactionResult(w.slice(1), w.slice(0, 2), 0),
    message: 'is both kept and archived',
  },
  'an event kept twice': {
    shape: (w) => new CompactionResult([w[2]!, ...w.slice(2)], w.slice(0, 2), 0),
    message: 'is both kept and archived, or kept twice',
  },
  'an archived event that is not in the window': {
    shape: (w) =>
      new CompactionResult(
        w.slice(1),
        [w[0]!, SessionEvent.create({ sessionId: w[0]!.sessionId, message: Messages.user('x') })],
        0,
      ),
    message: 'is not in the window',
  },
};

for (const backend of allBackends()) {
  describe(`the service verifies every strategy result before writing: ${backend.name}`, function () {
    this.timeout(30_000);
    before(async function () {
      await backend.setup(this);
    });
    after(async () => backend.teardown());

    async function sixEvents(service: DefaultSessionService) {
      const { id } = await service.create({ userId: 'u' });
      for (let i = 0; i < 3; i++) {
        await service.appendMessage(id, Messages.user(`question ${i}`));
        await service.appendMessage(id, Messages.assistant(`answer ${i}`));
      }
      return id;
    }

    for (const [what, { shape, message }] of Object.entries(BAD)) {
      it(`refuses ${what}: IllegalStateError naming the strategy, the log untouched`, async function () {
        const repo = backend.repository();
        const service = new DefaultSessionService(repo, { logger: silentLogger });
        const id = await sixEvents(service);
        const before = await repo.findEvents(id, EventFilter.all());
        const version = await repo.getEventVersion(id);
        const error = await expectRejects(
          service.compact(id, () => true, new CustomStrategy(shape)),
          IllegalStateError,
        );
        expect(error.message).to.include('Strategy CustomStrategy returned an invalid compaction result');
        expect(error.message).to.include(message);
        expect(await repo.getEventVersion(id)).to.equal(version);
        const after = await repo.findEvents(id, EventFilter.all());
        expect(after.map((e) => [e.id, e.archived])).to.deep.equal(before.map((e) => [e.id, e.archived]));
      });
    }

    it('a well-formed result of a built-in strategy still commits', async function () {
      const repo = backend.repository();
      const service = new DefaultSessionService(repo, { logger: silentLogger });
      const id = await sixEvents(service);
      const result = await service.compact(
        id,
        () => true,
        new SlidingWindowCompactionStrategy({ maxEvents: 2, tokenCountEstimator: new CharEstimator() }),
      );
      expect(result.archivedEvents).to.have.length(4);
      expect(await repo.findEvents(id, EventFilter.all())).to.have.length(6);
    });
  });
}
