/**
 * SessionForker's snapshot against writes that land while it reads the source log: an archive purge removes
 * events without a version step, so only the purge generation shows it. The repositories are the real
 * in-memory one, with the purge run in the middle of a read.
 */
import { expect } from 'chai';
import {
  DefaultSessionService,
  EventFilter,
  IllegalStateError,
  InMemorySessionRepository,
  Messages,
  SlidingWindowCompactionStrategy,
  type SessionEvent,
} from 'session-compaction';
import { CharEstimator, expectRejects } from '../support/fixtures.js';
import { silentLogger } from '../summarization/support.js';

const est = new CharEstimator();
const ids = (events: readonly SessionEvent[]) => events.map((e) => e.id);

/**
 * The in-memory repository read the way a paging backend reads a long log: the first half of the events by
 * position, then the rest from the position where the first page ended. `duringRead` runs between the two
 * pages (of the next `times` reads of the whole log), as a concurrent writer would.
 */
class PagedReadRepository extends InMemorySessionRepository {
  /** Reads of the whole log since the last `duringRead`. */
  logReads = 0;
  private interleaved: { write: () => Promise<unknown>; times: number } | null = null;

  duringRead(write: () => Promise<unknown>, times = 1): void {
    this.interleaved = { write, times };
    this.logReads = 0;
  }

  override async findEvents(id: string, filter?: EventFilter): Promise<SessionEvent[]> {
    const first = await super.findEvents(id, filter);
    if (filter !== undefined && Object.keys(filter.toOptions()).length > 0) return first;
    this.logReads++;
    const interleaved = this.interleaved;
    if (interleaved === null || interleaved.times === 0) return first;
    interleaved.times--;
    await interleaved.write();
    const half = Math.ceil(first.length / 2);
    return [...first.slice(0, half), ...(await super.findEvents(id, filter)).slice(half)];
  }
}

/** A repository of a custom backend that has no getEventLogState: the in-memory one without it. */
class VersionOnlyRepository extends InMemorySessionRepository {
  constructor() {
    super();
    Object.defineProperty(this, 'getEventLogState', { value: undefined });
  }
}

async function compactedConversation(service: DefaultSessionService): Promise<string> {
  const { id } = await service.create({ userId: 'alice' });
  for (let i = 0; i < 6; i++) {
    await service.appendMessage(id, Messages.user(`question ${i}`));
    await service.appendMessage(id, Messages.assistant(`answer ${i}`));
  }
  await service.compact(
    id,
    () => true,
    new SlidingWindowCompactionStrategy({ maxEvents: 4, cutWithinTurn: 'never', tokenCountEstimator: est }),
  );
  return id;
}

describe('SessionForker', function () {
  let repository: PagedReadRepository;
  let service: DefaultSessionService;
  beforeEach(() => {
    repository = new PagedReadRepository();
    service = new DefaultSessionService(repository, { logger: silentLogger, tokenCountEstimator: est });
  });

  it('reads the log again when an archive purge lands during the read, and copies the purged log whole', async function () {
    const id = await compactedConversation(service);
    const before = await service.getEventLogState(id);
    expect(before.purgeGeneration).to.equal(0);
    repository.duringRead(() => repository.purgeArchivedEvents(id, { keepLast: 0, limit: 3 }));
    const fork = await service.forkSession(id, { userId: 'alice' });
    expect(repository.logReads).to.equal(2);
    const source = await service.getEvents(id, EventFilter.all());
    // The purge removed 3 archived events and left the version where it was.
    expect(await service.getEventLogState(id)).to.deep.equal({ version: before.version, purgeGeneration: 1 });
    // The torn first read missed 3 events of the window; the copy is the source as it is after the purge.
    expect(ids(await service.getEvents(fork.id, EventFilter.all()))).to.deep.equal(ids(source));
    expect(fork.metadata.forkedFrom).to.deep.include({ version: before.version, purgeGeneration: 1 });
  });

  it('gives up with IllegalStateError, creating nothing, when a purge lands during every read', async function () {
    const id = await compactedConversation(service);
    repository.duringRead(() => repository.purgeArchivedEvents(id, { keepLast: 0, limit: 1 }), Number.POSITIVE_INFINITY);
    await expectRejects(service.forkSession(id), IllegalStateError, `Could not fork ${id}: the session kept changing`);
    expect(repository.logReads).to.equal(5);
    expect((await service.findByUserId('alice')).map((s) => s.id)).to.deep.equal([id]);
  });

  it('records the purge generation it copied at: 0 for a never purged source', async function () {
    const id = await compactedConversation(service);
    repository.duringRead(async () => undefined, 0);
    const fork = await service.forkSession(id);
    expect(repository.logReads).to.equal(1);
    expect(fork.metadata.forkedFrom).to.deep.include({ version: await service.getEventVersion(id), purgeGeneration: 0 });
  });

  it('with a repository without getEventLogState, compares the version alone and records a null generation', async function () {
    const versionOnly = new DefaultSessionService(new VersionOnlyRepository(), {
      logger: silentLogger,
      tokenCountEstimator: est,
    });
    const id = await compactedConversation(versionOnly);
    const fork = await versionOnly.forkSession(id);
    expect(fork.metadata.forkedFrom).to.deep.include({ version: await versionOnly.getEventVersion(id), purgeGeneration: null });
    expect(ids(await versionOnly.getEvents(fork.id, EventFilter.all()))).to.deep.equal(
      ids(await versionOnly.getEvents(id, EventFilter.all())),
    );
  });
});
