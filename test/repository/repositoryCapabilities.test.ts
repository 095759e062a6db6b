/**
 * The capability interfaces of the repository SPI: which built-in repository has which (the table in
 * docs/repository-spi.md), that a wrapper keeps exactly the capabilities of what it wraps, that a capability
 * counts only whole, and what the service does with a repository that has none of them.
 */
import { expect } from 'chai';
import {
  DefaultSessionService,
  IllegalStateError,
  InMemorySessionRepository,
  Messages,
  SlidingWindowCompactionStrategy,
  type SessionRepository,
} from 'session-compaction';
import {
  instrumentRepository,
  isAtomicInsertRepository,
  isBatchAppendRepository,
  isCompactionRecordRepository,
  isEnumerableRepository,
  isErasureRepository,
  isEventLogStateRepository,
  isEventRewritingRepository,
  isForkingRepository,
  isUserErasureRepository,
  isMetadataUpdatingRepository,
  isMigratableRepository,
  isRetentionRepository,
  isSearchableRepository,
  isSessionListingRepository,
  isStorageReclaimingRepository,
} from 'session-compaction/spi';
import { allBackends } from '../support/backends.js';
import { CharEstimator } from '../support/fixtures.js';
import { rejection } from '../support/rejection.js';
import { silentLogger } from '../summarization/support.js';

const est = new CharEstimator();

const GUARDS = {
  AtomicInsertRepository: isAtomicInsertRepository,
  MetadataUpdatingRepository: isMetadataUpdatingRepository,
  EventLogStateRepository: isEventLogStateRepository,
  CompactionRecordRepository: isCompactionRecordRepository,
  BatchAppendRepository: isBatchAppendRepository,
  EnumerableRepository: isEnumerableRepository,
  SessionListingRepository: isSessionListingRepository,
  SearchableRepository: isSearchableRepository,
  ErasureRepository: isErasureRepository,
  EventRewritingRepository: isEventRewritingRepository,
  RetentionRepository: isRetentionRepository,
  StorageReclaimingRepository: isStorageReclaimingRepository,
  MigratableRepository: isMigratableRepository,
  ForkingRepository: isForkingRepository,
  UserErasureRepository: isUserErasureRepository,
} as const;
type Capability = keyof typeof GUARDS;

const capabilitiesOf = (repository: unknown): Capability[] =>
  (Object.keys(GUARDS) as Capability[]).filter((name) => GUARDS[name](repository));

const ALL = Object.keys(GUARDS) as Capability[];
const without = (...absent: Capability[]) => ALL.filter((c) => !absent.includes(c));

/** The table of docs/repository-spi.md. */
const EXPECTED: Record<string, Capability[]> = {
  memory: without('SearchableRepository', 'StorageReclaimingRepository', 'MigratableRepository'),
  sqlite: ALL,
  postgres: without('StorageReclaimingRepository'),
  redis: without('SessionListingRepository', 'SearchableRepository', 'StorageReclaimingRepository'),
};

/** Only the methods of the SessionRepository interface, over a full in-memory repository. */
function baseOnly(inner = new InMemorySessionRepository()): SessionRepository {
  return {
    save: (s) => inner.save(s),
    findById: (id) => inner.findById(id),
    findByUserId: (userId) => inner.findByUserId(userId),
    findExpiredSessionIds: (before) => inner.findExpiredSessionIds(before),
    delete: (id) => inner.delete(id),
    appendEvent: (e) => inner.appendEvent(e),
    getEventVersion: (id) => inner.getEventVersion(id),
    findEvents: (id, filter) => inner.findEvents(id, filter),
    compactEvents: (id, archived, retained, version) => inner.compactEvents(id, archived, retained, version),
  };
}

describe('repository capabilities', function () {
  for (const backend of allBackends()) {
    describe(backend.name, function () {
      before(async function () {
        await backend.setup(this);
      });
      after(async () => backend.teardown());

      it('has exactly the capabilities the documentation lists', function () {
        expect(capabilitiesOf(backend.repository())).to.deep.equal(EXPECTED[backend.name]);
      });

      it('keeps exactly those capabilities when instrumented', function () {
        expect(capabilitiesOf(instrumentRepository(backend.repository()))).to.deep.equal(EXPECTED[backend.name]);
      });
    });
  }

  it('a repository with only the SessionRepository methods has no capability, instrumented or not', function () {
    expect(capabilitiesOf(baseOnly())).to.deep.equal([]);
    expect(capabilitiesOf(instrumentRepository(baseOnly()))).to.deep.equal([]);
  });

  it('a capability with one of its methods missing counts as absent', function () {
    const partial = { ...baseOnly(), eraseSession: async () => null, findTombstone: async () => null };
    expect(isErasureRepository(partial)).to.equal(false);
    const half = { ...baseOnly(), listCompactions: async () => [] };
    expect(isCompactionRecordRepository(half)).to.equal(false);
  });

  it('a property that is not a function is not a method', function () {
    expect(isSearchableRepository({ ...baseOnly(), searchEvents: 'yes' })).to.equal(false);
    expect(isSearchableRepository({ ...baseOnly(), searchEvents: undefined })).to.equal(false);
  });

  it('the guards answer false for values that are not objects', function () {
    for (const value of [null, undefined, 42, 'repository', true]) {
      expect(capabilitiesOf(value)).to.deep.equal([]);
    }
  });

  describe('the service over a repository without capabilities', function () {
    let service: DefaultSessionService;
    let id: string;
    beforeEach(async () => {
      service = new DefaultSessionService(baseOnly(), { logger: silentLogger, tokenCountEstimator: est });
      ({ id } = await service.create({ userId: 'alice' }));
      for (let i = 0; i < 3; i++) {
        await service.appendMessage(id, Messages.user(`q${i}`));
        await service.appendMessage(id, Messages.assistant(`a${i}`));
      }
    });

    it('compacts, records nothing, and refuses listCompactions naming the capability', async function () {
      const result = await service.compact(
        id,
        () => true,
        new SlidingWindowCompactionStrategy({ maxEvents: 2, tokenCountEstimator: est }),
      );
      expect(result.archivedEvents).to.have.length(4);
      const error = await rejection(service.listCompactions(id));
      expect(error).to.be.instanceOf(IllegalStateError);
      expect(error.message).to.include('listCompactions is not supported by this repository');
      expect(error.message).to.include('CompactionRecordRepository');
    });

    it('refuses redaction and retention naming the missing capability', async function () {
      const [event] = await service.getEvents(id);
      const redaction = await rejection(service.redactEvent(id, event!.id, { reason: 'test' }));
      expect(redaction).to.be.instanceOf(IllegalStateError);
      expect(redaction.message).to.include('EventRewritingRepository');
      const retention = await rejection(service.applyRetention({ maxArchivedEventsPerSession: 0 }));
      expect(retention).to.be.instanceOf(IllegalStateError);
      expect(retention.message).to.include('RetentionRepository');
    });

    it('deletes without a tombstone: the id can be created again', async function () {
      const report = await service.delete(id);
      expect(report).to.include({ sessions: 1, tombstones: 0 });
      expect(await service.findById(id)).to.equal(null);
      expect((await service.create({ userId: 'bob', id })).userId).to.equal('bob');
    });

    it('reports the event-log state with the version alone', async function () {
      expect(await service.getEventLogState(id)).to.deep.equal({ version: 6, purgeGeneration: null });
    });
  });
});
