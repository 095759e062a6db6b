/**
 * The data-lifecycle capabilities of the SessionRepository SPI (erasure, rewriting, retention) as one reusable suite:
 * erasure with tombstones, in-place rewrites, archive purges, activity listing. Every backend runs it.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import {
  EventFilter,
  IllegalStateError,
  InvalidArgumentError,
  Messages,
  Session,
  SessionEvent,
  type SessionRepository,
} from 'session-compaction';
import {
  encodeEvent,
  isEventLogStateRepository,
  isEventRewritingRepository,
  isForkingRepository,
  isSearchableRepository,
  isUserErasureRepository,
  ownerHash,
  type AtomicInsertRepository,
  type ErasureRepository,
  type EventRewritingRepository,
  type RetentionRepository,
} from 'session-compaction/spi';
import { rejection } from '../support/rejection.js';

let counter = 0;
const uid = (p: string) => `${p}-${Date.now().toString(36)}-${(counter++).toString(36)}`;
const DAY = 24 * 60 * 60 * 1000;

/** Everything a public read returns about these sessions, as bytes. */
export async function snapshotOf(repo: SessionRepository, ids: readonly string[]): Promise<string> {
  const parts = [];
  for (const id of ids) {
    const s = await repo.findById(id);
    parts.push({
      session: s === null ? null : { ...s, createdAt: s.createdAt.getTime(), expiresAt: s.expiresAt?.getTime() ?? null },
      version: await repo.getEventVersion(id),
      events: (await repo.findEvents(id, EventFilter.all())).map((e) => encodeEvent(e)),
    });
  }
  return JSON.stringify(parts);
}

/** What the suite needs of a store; searching and the event-log state are tested where the store has them. */
export type LifecycleTestRepository = SessionRepository &
  AtomicInsertRepository &
  ErasureRepository &
  EventRewritingRepository &
  RetentionRepository;

export function lifecycleRepositoryContract(name: string, open: () => Promise<LifecycleTestRepository>): void {
  describe(`SessionRepository lifecycle contract: ${name}`, function () {
    let repo: LifecycleTestRepository;
    beforeEach(async function () {
      repo = await open();
    });
    afterEach(async function () {
      await repo?.close?.();
    });

    const tombstone = (deletedAt = new Date(), ttlMs: number | null = DAY) => ({
      deletedAt,
      expiresAt: ttlMs === null ? null : new Date(deletedAt.getTime() + ttlMs),
    });
    const user = (sessionId: string, text: string, init: Partial<Parameters<typeof SessionEvent.create>[0]> = {}) =>
      SessionEvent.create({ sessionId, id: uid('e'), message: Messages.user(text), ...init });

    /** 6 originals: 4 archived, a summary pair, a masked copy of the 4th, 2 active. */
    async function seeded(userId = 'alice'): Promise<{ id: string; events: SessionEvent[] }> {
      const id = uid('s');
      await repo.save(Session.create({ id, userId }));
      const events = [1, 2, 3, 4, 5, 6].map((n) => user(id, `message ${n}`));
      for (const e of events) await repo.appendEvent(e);
      const meta = { synthetic: true, compactionSource: 'test', coveredEventIds: events.slice(0, 4).map((e) => e.id) };
      const pair = [
        SessionEvent.create({ sessionId: id, message: Messages.user('Summarize'), metadata: meta }),
        SessionEvent.create({ sessionId: id, message: Messages.assistant('summary of 1-4'), metadata: meta }),
      ];
      const copy = SessionEvent.create({
        sessionId: id,
        message: Messages.user('message 4 (masked)'),
        metadata: { maskedFrom: events[3]!.id, compactionSource: 'test' },
      });
      expect(await repo.compactEvents(id, events.slice(0, 4), [...pair, copy, ...events.slice(4)], 6)).to.equal(true);
      return { id, events };
    }

    describe('eraseSession', function () {
      it('removes the session with every event and reports them by kind', async function () {
        const { id } = await seeded();
        const erased = await repo.eraseSession(id, { tombstone: tombstone() });
        expect(erased).to.deep.equal({
          sessionId: id,
          userId: 'alice',
          activeEvents: 2,
          archivedEvents: 4,
          summaries: 2,
          maskedCopies: 1,
        });
        expect(await repo.findById(id)).to.equal(null);
        expect(await repo.findEvents(id)).to.deep.equal([]);
        expect(await repo.getEventVersion(id)).to.equal(0);
        expect((await repo.findByUserId('alice')).map((s) => s.id)).to.not.include(id);
      });

      it('returns null for a missing session and writes no tombstone for it', async function () {
        const id = uid('missing');
        expect(await repo.eraseSession(id, { tombstone: tombstone() })).to.equal(null);
        expect(await repo.findTombstone(id)).to.equal(null);
      });

      it('leaves every other session byte-for-byte unchanged', async function () {
        const a = await seeded('alice');
        const b = await seeded('bob');
        const before = await snapshotOf(repo, [b.id]);
        await repo.eraseSession(a.id, { tombstone: tombstone() });
        expect(await snapshotOf(repo, [b.id])).to.equal(before);
      });

      it('writes a tombstone with the owner hash; save and saveIfAbsent of that id are refused for anyone', async function () {
        const { id } = await seeded('alice');
        const at = new Date('2030-01-02T03:04:05.678Z');
        await repo.eraseSession(id, { tombstone: tombstone(at, DAY) });
        const t = await repo.findTombstone(id);
        expect(t).to.deep.equal({
          sessionId: id,
          ownerHash: ownerHash('alice'),
          deletedAt: at,
          expiresAt: new Date(at.getTime() + DAY),
        });
        for (const owner of ['alice', 'mallory']) {
          const s = Session.create({ id, userId: owner });
          expect(await rejection(repo.save(s)))
            .to.be.instanceOf(IllegalStateError)
            .with.property('message')
            .that.includes(`Session ${id} was deleted`);
          expect(await rejection(repo.saveIfAbsent(s))).to.be.instanceOf(IllegalStateError);
        }
        expect(await repo.findById(id)).to.equal(null);
      });

      it('without a tombstone the id can be saved again', async function () {
        const { id } = await seeded();
        await repo.eraseSession(id, { tombstone: null });
        expect(await repo.findTombstone(id)).to.equal(null);
        expect(await repo.saveIfAbsent(Session.create({ id, userId: 'mallory' }))).to.equal(true);
        expect(await repo.findEvents(id)).to.deep.equal([]);
      });

      it('refuses a late append and a late compaction with "Session not found"', async function () {
        const { id, events } = await seeded();
        const version = await repo.getEventVersion(id);
        await repo.eraseSession(id, { tombstone: tombstone() });
        const append = await rejection(repo.appendEvent(user(id, 'late')));
        expect(append).to.be.instanceOf(InvalidArgumentError).with.property('message', `Session not found: ${id}`);
        const compact = await rejection(repo.compactEvents(id, [], [events[5]!], version));
        expect(compact).to.be.instanceOf(InvalidArgumentError).with.property('message', `Session not found: ${id}`);
        expect(await repo.findById(id)).to.equal(null);
      });

      it('with idleBefore erases only a session whose newest event is older', async function () {
        const id = uid('s');
        const created = new Date('2030-01-01T00:00:00Z');
        await repo.save(Session.create({ id, userId: 'alice', createdAt: created }));
        await repo.appendEvent(user(id, 'x', { timestamp: new Date('2030-01-10T00:00:00Z') }));
        expect(await repo.eraseSession(id, { tombstone: null, idleBefore: new Date('2030-01-10T00:00:00Z') })).to.equal(null);
        expect(await repo.findById(id)).to.not.equal(null);
        const erased = await repo.eraseSession(id, { tombstone: null, idleBefore: new Date('2030-01-10T00:00:00.001Z') });
        expect(erased?.activeEvents).to.equal(1);
      });
    });

    describe('forkSession (ForkingRepository) and user erasure marks (UserErasureRepository)', function () {
      const forking = () => {
        if (!isForkingRepository(repo) || !isUserErasureRepository(repo)) throw new Error(`${name} cannot fork atomically`);
        return repo;
      };
      const copiesOf = (forkId: string, events: readonly SessionEvent[]) =>
        events.map((e) => SessionEvent.create({ id: e.id, sessionId: forkId, message: e.message, archived: e.archived }));
      const stateOf = async (id: string) =>
        isEventLogStateRepository(repo)
          ? repo.getEventLogState(id)
          : { version: await repo.getEventVersion(id), purgeGeneration: null };

      it('writes the session and every copied event in one step: archived flags kept, version = events copied', async function () {
        const r = forking();
        const { id } = await seeded('alice');
        const log = await repo.findEvents(id, EventFilter.all());
        const forkId = uid('fork');
        const outcome = await r.forkSession({
          sourceId: id,
          expected: await stateOf(id),
          fork: Session.create({ id: forkId, userId: 'alice' }),
          events: copiesOf(forkId, log),
          token: uid('token'),
        });
        expect(outcome).to.equal('forked');
        const copied = await repo.findEvents(forkId, EventFilter.all());
        expect(copied.map((e) => [e.id, e.archived])).to.deep.equal(log.map((e) => [e.id, e.archived]));
        expect(await repo.getEventVersion(forkId)).to.equal(log.length);
        expect((await repo.findById(forkId))?.userId).to.equal('alice');
      });

      it('writes nothing when the source moved, is gone, or the id is taken; a tombstoned id is refused', async function () {
        const r = forking();
        const { id } = await seeded('alice');
        const expected = await stateOf(id);
        const log = await repo.findEvents(id, EventFilter.all());
        const attempt = (forkId: string, sourceId = id, state = expected) =>
          r.forkSession({
            sourceId,
            expected: state,
            fork: Session.create({ id: forkId, userId: 'alice' }),
            events: copiesOf(forkId, log),
            token: uid('token'),
          });
        await repo.appendEvent(user(id, 'after the read'));
        const changed = uid('fork');
        expect(await attempt(changed)).to.equal('changed');
        expect(await repo.findById(changed)).to.equal(null);
        expect(await repo.findEvents(changed, EventFilter.all())).to.deep.equal([]);

        const missing = uid('fork');
        expect(await attempt(missing, uid('no-such-source'), { version: 0, purgeGeneration: 0 })).to.equal('source-missing');
        expect(await repo.findById(missing)).to.equal(null);

        const taken = (await seeded('bob')).id;
        const before = await snapshotOf(repo, [taken]);
        expect(await attempt(taken, id, await stateOf(id))).to.equal('exists');
        expect(await snapshotOf(repo, [taken])).to.equal(before);

        const deleted = (await seeded('alice')).id;
        await repo.eraseSession(deleted, { tombstone: tombstone() });
        expect(await rejection(attempt(deleted, id, await stateOf(id)))).to.be.instanceOf(IllegalStateError);
        expect(await repo.findById(deleted)).to.equal(null);
      });

      it("a user's erasure mark refuses every new session of that user inside the store until it is removed or expires", async function () {
        const r = forking();
        const marked = uid('marked');
        const { id } = await seeded(marked);
        await r.beginUserErasure(marked, new Date(Date.now() + 60_000));
        const fresh = () => Session.create({ id: uid('s'), userId: marked });
        for (const write of [
          () => repo.saveIfAbsent(fresh()),
          () => repo.save(fresh()),
          async () => r.forkSession({ sourceId: id, expected: await stateOf(id), fork: fresh(), events: [], token: 't' }),
        ]) {
          const error = await rejection(write());
          expect(error).to.be.instanceOf(IllegalStateError);
          expect(error.message).to.include("its user's data is being erased");
        }
        // The user's existing session can still be written (the erasure will take it); other users are free.
        await repo.appendEvent(user(id, 'late'));
        expect(await repo.saveIfAbsent(Session.create({ id: uid('s'), userId: uid('other') }))).to.equal(true);
        await r.endUserErasure(marked);
        expect(await repo.saveIfAbsent(fresh())).to.equal(true);
        // An expired mark (a crashed erasure) blocks nothing.
        await r.beginUserErasure(marked, new Date(Date.now() - 1000));
        expect(await repo.saveIfAbsent(fresh())).to.equal(true);
        await r.endUserErasure(marked);
      });

      it("a session id spelled like an erasure mark's old key ('user-erasure:<owner hash>') and that erasure are independent", async function () {
        const r = forking();
        const erased = uid('erased');
        const lookalike = `user-erasure:${ownerHash(erased)}`;
        const erasedUsersSession = () => repo.saveIfAbsent(Session.create({ id: uid('s'), userId: erased }));
        await r.beginUserErasure(erased, new Date(Date.now() + 60_000));
        // Another user's session under that id is neither refused as deleted nor reported as a tombstone.
        expect(await repo.saveIfAbsent(Session.create({ id: lookalike, userId: 'carol' }))).to.equal(true);
        expect(await repo.findTombstone(lookalike)).to.equal(null);
        await repo.appendEvent(user(lookalike, 'hello'));
        expect(await rejection(erasedUsersSession())).to.be.instanceOf(IllegalStateError);
        // Its deletion (a tombstone under that id) leaves the erasure in force ...
        await repo.eraseSession(lookalike, { tombstone: tombstone() });
        expect(await rejection(erasedUsersSession())).to.be.instanceOf(IllegalStateError);
        // ... and the erasure's end leaves its tombstone.
        await r.endUserErasure(erased);
        expect((await repo.findTombstone(lookalike))?.ownerHash).to.equal(ownerHash('carol'));
        expect(await erasedUsersSession()).to.equal(true);
      });
    });

    describe('tombstones', function () {
      it('recreateSession lets the owner take the id back and removes the tombstone', async function () {
        const { id } = await seeded('alice');
        await repo.eraseSession(id, { tombstone: tombstone() });
        expect(await repo.recreateSession(Session.create({ id, userId: 'alice' }))).to.equal(true);
        expect(await repo.findTombstone(id)).to.equal(null);
        expect((await repo.findById(id))?.userId).to.equal('alice');
        expect(await repo.findEvents(id)).to.deep.equal([]);
        expect(await repo.getEventVersion(id)).to.equal(0);
      });

      it('recreateSession refuses another owner and answers false when the session exists', async function () {
        const { id } = await seeded('alice');
        expect(await repo.recreateSession(Session.create({ id, userId: 'alice' }))).to.equal(false);
        await repo.eraseSession(id, { tombstone: tombstone() });
        expect(await rejection(repo.recreateSession(Session.create({ id, userId: 'mallory' })))).to.be.instanceOf(
          IllegalStateError,
        );
        expect(await repo.findById(id)).to.equal(null);
        expect(await repo.findTombstone(id)).to.not.equal(null);
      });

      it('purgeTombstones removes only expired ones, and only the named one when given', async function () {
        const base = new Date('2031-05-01T00:00:00Z');
        const ids = await Promise.all([0, 1, 2].map(async () => (await seeded()).id));
        await repo.eraseSession(ids[0]!, { tombstone: tombstone(base, 1000) });
        await repo.eraseSession(ids[1]!, { tombstone: tombstone(base, 1000) });
        await repo.eraseSession(ids[2]!, { tombstone: tombstone(base, null) });
        const later = new Date(base.getTime() + 5000);
        expect(await repo.purgeTombstones(later, 10, ids[1]!)).to.equal(1);
        expect(await repo.findTombstone(ids[0]!)).to.not.equal(null);
        expect(await repo.findTombstone(ids[1]!)).to.equal(null);
        expect(await repo.purgeTombstones(base, 10, ids[0]!)).to.equal(0);
        await repo.purgeTombstones(later, 1000);
        expect(await repo.findTombstone(ids[0]!)).to.equal(null);
        expect(await repo.findTombstone(ids[2]!)).to.not.equal(null);
      });
    });

    describe('rewriteEvents', function () {
      it('rewrites archived and active events in place: same order, same archived flags, version + 1', async function () {
        const { id, events } = await seeded();
        const before = await repo.findEvents(id);
        const version = await repo.getEventVersion(id);
        const archived = events[1]!.with({ message: Messages.user('[redacted]'), metadata: { redaction: { reason: 'test' } } });
        const active = events[5]!.with({ message: Messages.user('[redacted] too') });
        expect(await repo.rewriteEvents(id, [archived, active], version)).to.equal(true);
        expect(await repo.getEventVersion(id)).to.equal(version + 1);
        const after = await repo.findEvents(id);
        expect(after.map((e) => [e.id, e.archived])).to.deep.equal(before.map((e) => [e.id, e.archived]));
        const byId = new Map(after.map((e) => [e.id, e]));
        expect(byId.get(archived.id)!.text).to.equal('[redacted]');
        expect(byId.get(archived.id)!.metadata).to.deep.equal({ redaction: { reason: 'test' } });
        expect(byId.get(archived.id)!.archived).to.equal(true);
        expect(byId.get(active.id)!.text).to.equal('[redacted] too');
        expect(await repo.findEvents(id, EventFilter.of({ keyword: 'message 2' }))).to.deep.equal([]);
        expect((await repo.findEvents(id, EventFilter.active())).map((e) => e.id)).to.include(active.id);
      });

      it('updates the full-text index with the row: the old words no longer find the event', async function () {
        const { id, events } = await seeded();
        if (!isSearchableRepository(repo)) this.skip();
        const version = await repo.getEventVersion(id);
        const before = await repo.searchEvents(id, 'message', { includeActive: true, limit: 50 });
        expect(before.map((h) => h.event.id)).to.include(events[0]!.id);
        await repo.rewriteEvents(id, [events[0]!.with({ message: Messages.user('[redacted]') })], version);
        const after = await repo.searchEvents(id, 'message', { includeActive: true, limit: 50 });
        expect(after.map((h) => h.event.id)).to.not.include(events[0]!.id);
        expect((await repo.searchEvents(id, 'redacted', { includeActive: true })).map((h) => h.event.id)).to.deep.equal([
          events[0]!.id,
        ]);
      });

      it('a stale version changes nothing and answers false', async function () {
        const { id, events } = await seeded();
        const version = await repo.getEventVersion(id);
        const before = await snapshotOf(repo, [id]);
        expect(await repo.rewriteEvents(id, [events[0]!.with({ message: Messages.user('x') })], version - 1)).to.equal(false);
        expect(await snapshotOf(repo, [id])).to.equal(before);
      });

      it('a missing event or session throws and changes nothing', async function () {
        const { id, events } = await seeded();
        const version = await repo.getEventVersion(id);
        const before = await snapshotOf(repo, [id]);
        const ghost = user(id, 'ghost');
        const error = await rejection(repo.rewriteEvents(id, [events[0]!.with({ message: Messages.user('x') }), ghost], version));
        expect(error).to.be.instanceOf(InvalidArgumentError).with.property('message', `Event not found: ${ghost.id}`);
        expect(await snapshotOf(repo, [id])).to.equal(before);
        const other = uid('missing');
        const missing = await rejection(repo.rewriteEvents(other, [user(other, 'x')], 0));
        expect(missing).to.be.instanceOf(InvalidArgumentError).with.property('message', `Session not found: ${other}`);
      });
    });

    describe('purgeArchivedEvents', function () {
      /** 10 archived events (timestamps day 1..10), an archived synthetic one, 2 active ones. */
      async function withHistory(): Promise<{ id: string; archived: SessionEvent[]; active: SessionEvent[] }> {
        const id = uid('s');
        await repo.save(Session.create({ id, userId: 'alice' }));
        const day = (n: number) => new Date(Date.UTC(2030, 0, n));
        const archived = Array.from({ length: 10 }, (_, i) => user(id, `old ${i + 1}`, { timestamp: day(i + 1) }));
        const synthetic = SessionEvent.create({
          sessionId: id,
          message: Messages.assistant('an archived summary'),
          timestamp: day(1),
          metadata: { synthetic: true, compactionSource: 'test' },
        });
        const active = [user(id, 'new 1', { timestamp: day(1) }), user(id, 'new 2', { timestamp: day(1) })];
        for (const e of [...archived, synthetic, ...active]) await repo.appendEvent(e);
        expect(await repo.compactEvents(id, [...archived, synthetic], active, 13)).to.equal(true);
        return { id, archived, active };
      }

      it('removes archived events older than `before`, oldest first, and never the active window or a synthetic event', async function () {
        const { id, archived, active } = await withHistory();
        const version = await repo.getEventVersion(id);
        const removed = await repo.purgeArchivedEvents(id, { before: new Date(Date.UTC(2030, 0, 4)), limit: 100 });
        expect(removed.sort()).to.deep.equal(
          archived
            .slice(0, 3)
            .map((e) => e.id)
            .sort(),
        );
        const left = await repo.findEvents(id);
        expect(left.map((e) => e.text)).to.deep.equal([
          ...archived.slice(3).map((e) => e.text),
          'an archived summary',
          ...active.map((e) => e.text),
        ]);
        expect(await repo.getEventVersion(id)).to.equal(version);
        expect(await repo.purgeArchivedEvents(id, { before: new Date(Date.UTC(2030, 0, 4)), limit: 100 })).to.deep.equal([]);
      });

      it('a purge that removes events keeps the version and moves the purge generation by one, so any reader can see it', async function () {
        if (!isEventLogStateRepository(repo)) this.skip();
        const { id, active } = await withHistory();
        const before = await repo.getEventLogState(id);
        expect(before).to.deep.equal({ version: await repo.getEventVersion(id), purgeGeneration: 0 });
        expect(await repo.purgeArchivedEvents(id, { keepLast: 4, limit: 3 })).to.have.length(3);
        const purged = { version: before.version, purgeGeneration: 1 };
        expect(await repo.getEventLogState(id)).to.deep.equal(purged);
        // Nothing matched: nothing to see.
        expect(await repo.purgeArchivedEvents(id, { before: new Date(Date.UTC(2000, 0, 1)), limit: 3 })).to.deep.equal([]);
        expect(await repo.getEventLogState(id)).to.deep.equal(purged);
        // Appends, compactions and rewrites step the version and leave the generation.
        await repo.appendEvent(user(id, 'after the purge'));
        expect(await repo.getEventLogState(id)).to.deep.equal({ version: before.version + 1, purgeGeneration: 1 });
        const window = await repo.findEvents(id, EventFilter.active());
        expect(await repo.compactEvents(id, [window[0]!], window.slice(1), before.version + 1)).to.equal(true);
        expect(await repo.getEventLogState(id)).to.deep.equal({ version: before.version + 2, purgeGeneration: 1 });
        if (isEventRewritingRepository(repo)) {
          const redacted = active[1]!.with({ message: Messages.user('[redacted]') });
          expect(await repo.rewriteEvents(id, [redacted], before.version + 2)).to.equal(true);
          expect(await repo.getEventLogState(id)).to.deep.equal({ version: before.version + 3, purgeGeneration: 1 });
        }
        expect(await repo.purgeArchivedEvents(id, { keepLast: 0, limit: 100 })).to.not.deep.equal([]);
        expect((await repo.getEventLogState(id)).purgeGeneration).to.equal(2);
      });

      it('keepLast keeps the newest archived events (the synthetic one counts but stays); limit bounds one call', async function () {
        const { id, archived } = await withHistory();
        const first = await repo.purgeArchivedEvents(id, { keepLast: 4, limit: 5 });
        expect(first.sort()).to.deep.equal(
          archived
            .slice(0, 5)
            .map((e) => e.id)
            .sort(),
        );
        const second = await repo.purgeArchivedEvents(id, { keepLast: 4, limit: 5 });
        expect(second.sort()).to.deep.equal([archived[5]!.id, archived[6]!.id].sort());
        const left = await repo.findEvents(id);
        expect(left.filter((e) => e.archived).map((e) => e.text)).to.deep.equal([
          'old 8',
          'old 9',
          'old 10',
          'an archived summary',
        ]);
      });

      it('a removed id may be appended again (it is no longer in the log)', async function () {
        const { id, archived } = await withHistory();
        await repo.purgeArchivedEvents(id, { keepLast: 0, limit: 100 });
        const version = await repo.getEventVersion(id);
        await repo.appendEvent(archived[0]!.with({ archived: false }));
        expect(await repo.getEventVersion(id)).to.equal(version + 1);
      });

      it('property: repeated bounded purges remove exactly the matching archived originals, keep the rest in order, never change the version, and count one purge generation per call that removed something', async function () {
        const day = (n: number) => new Date(Date.UTC(2030, 0, 1) + n * DAY);
        const shape = fc.record({ archived: fc.boolean(), synthetic: fc.boolean(), day: fc.integer({ min: 1, max: 10 }) });
        const criteria = fc
          .record({
            before: fc.option(fc.integer({ min: 0, max: 11 }), { nil: undefined }),
            keepLast: fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined }),
            limit: fc.integer({ min: 1, max: 7 }),
          })
          .filter((c) => c.before !== undefined || c.keepLast !== undefined);
        await fc.assert(
          fc.asyncProperty(fc.array(shape, { minLength: 1, maxLength: 20 }), criteria, async (shapes, c) => {
            const id = uid('p');
            await repo.save(Session.create({ id, userId: 'alice' }));
            const events = shapes.map((x, i) =>
              SessionEvent.create({
                sessionId: id,
                id: `e${i}`,
                message: Messages.user(`event ${i}`),
                timestamp: day(x.day),
                metadata: x.synthetic ? { synthetic: true, compactionSource: 'test' } : {},
              }),
            );
            for (const e of events) await repo.appendEvent(e);
            const toArchive = events.filter((_, i) => shapes[i]!.archived);
            if (toArchive.length > 0) {
              const retained = events.filter((_, i) => !shapes[i]!.archived);
              expect(await repo.compactEvents(id, toArchive, retained, await repo.getEventVersion(id))).to.equal(true);
            }
            const before = await repo.findEvents(id, EventFilter.all());
            const version = await repo.getEventVersion(id);
            if (isEventLogStateRepository(repo)) {
              expect(await repo.getEventLogState(id)).to.deep.equal({ version, purgeGeneration: 0 });
            }
            const archive = before.filter((e) => e.archived);
            const cutoff = c.before === undefined ? undefined : day(c.before);
            const removable = new Set(
              archive
                .filter((e, i) => {
                  if (e.isSynthetic()) return false;
                  const old = cutoff !== undefined && e.timestamp < cutoff;
                  const beyond = c.keepLast !== undefined && archive.length - i > c.keepLast;
                  return old || beyond;
                })
                .map((e) => e.id),
            );
            const removed: string[] = [];
            let removingCalls = 0;
            for (let call = 0; call <= before.length; call++) {
              const ids = await repo.purgeArchivedEvents(id, {
                ...(cutoff !== undefined ? { before: cutoff } : {}),
                ...(c.keepLast !== undefined ? { keepLast: c.keepLast } : {}),
                limit: c.limit,
              });
              expect(ids.length).to.be.at.most(c.limit);
              if (ids.length === 0) break;
              removingCalls++;
              removed.push(...ids);
            }
            expect([...removed].sort()).to.deep.equal([...removable].sort());
            const after = await repo.findEvents(id, EventFilter.all());
            const kept = (events: readonly SessionEvent[]) => events.map((e) => `${e.id}:${e.archived}`);
            expect(kept(after)).to.deep.equal(kept(before.filter((e) => !removable.has(e.id))));
            expect(await repo.getEventVersion(id)).to.equal(version);
            if (isEventLogStateRepository(repo)) {
              expect(await repo.getEventLogState(id)).to.deep.equal({ version, purgeGeneration: removingCalls });
            }
          }),
          { numRuns: 30 },
        );
      });

      it('is [] for a missing session and rejects bad criteria', async function () {
        expect(await repo.purgeArchivedEvents(uid('missing'), { keepLast: 0, limit: 10 })).to.deep.equal([]);
        const error = await rejection(repo.purgeArchivedEvents(uid('s'), { keepLast: 0, limit: 0 }));
        expect(error).to.be.instanceOf(InvalidArgumentError);
      });
    });

    describe('listSessionActivity', function () {
      it('pages through every session with its last activity: newest event, else creation', async function () {
        const created = new Date('2030-03-01T00:00:00Z');
        const quiet = uid('s');
        const busy = uid('s');
        await repo.save(Session.create({ id: quiet, userId: 'alice', createdAt: created }));
        await repo.save(Session.create({ id: busy, userId: 'bob', createdAt: created }));
        await repo.appendEvent(user(busy, 'one', { timestamp: new Date('2030-03-05T00:00:00Z') }));
        await repo.appendEvent(user(busy, 'two', { timestamp: new Date('2030-03-07T00:00:00Z') }));
        const found = new Map<string, { userId: string; lastActiveAt: Date }>();
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page = await repo.listSessionActivity(cursor, 1);
          for (const s of page.sessions) found.set(s.id, s);
          cursor = page.cursor;
          pages++;
        } while (cursor !== null && pages < 10_000);
        expect(found.get(quiet)).to.deep.include({ userId: 'alice', lastActiveAt: created });
        expect(found.get(busy)).to.deep.include({ userId: 'bob', lastActiveAt: new Date('2030-03-07T00:00:00Z') });
      });
    });
  });
}
