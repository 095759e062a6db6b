/**
 * SessionListingRepository on every backend that has it: keyset pages in id order with the sizes the studio
 * shows, filtered by user and by a literal id prefix.
 */
import { expect } from 'chai';
import {
  DefaultSessionService,
  EventFilter,
  InvalidArgumentError,
  Messages,
  Session,
  SlidingWindowCompactionStrategy,
} from 'session-compaction';
import { isSessionListingRepository, type SessionListingRepository } from 'session-compaction/spi';
import { allBackends } from '../support/backends.js';
import { CharEstimator, expectRejects } from '../support/fixtures.js';
import { silentLogger } from '../summarization/support.js';

describe('SessionListingRepository', function () {
  for (const backend of allBackends()) {
    describe(backend.name, function () {
      let repo: ReturnType<typeof backend.repository> & SessionListingRepository;
      let service: DefaultSessionService;
      // Fresh ids per run, so a store shared by the suite's tests never mixes their sessions.
      const run = `l${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

      before(async function () {
        await backend.setup(this);
        const r = backend.repository();
        if (!isSessionListingRepository(r)) this.skip();
        repo = r as typeof repo;
        service = new DefaultSessionService(repo, { logger: silentLogger, tokenCountEstimator: new CharEstimator() });
      });
      after(async () => backend.teardown());

      const create = (id: string, userId: string) => repo.save(Session.create({ id: `${run}-${id}`, userId }));

      it('reports the version, active and archived counts, the last event time and the standing compactions', async function () {
        const s = await create('sizes', `${run}-u1`);
        const times = [1, 2, 3, 4, 5].map((m) => new Date(Date.UTC(2026, 0, 1, 0, m)));
        for (const [i, t] of times.entries()) {
          await service.appendMessage(s.id, i % 2 === 0 ? Messages.user(`q${i}`) : Messages.assistant(`a${i}`), {
            timestamp: t,
          });
        }
        await service.compact(s.id, () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
        const page = await repo.listSessions({ idPrefix: `${run}-sizes` });
        expect(page.sessions).to.have.length(1);
        const [listing] = page.sessions;
        const active = await repo.findEvents(s.id);
        expect(listing!.session.userId).to.equal(`${run}-u1`);
        expect(listing!.version).to.equal(await repo.getEventVersion(s.id));
        expect(listing!.activeEvents).to.equal(active.filter((e) => !e.archived).length);
        expect(listing!.archivedEvents)
          .to.equal(active.filter((e) => e.archived).length)
          .and.to.be.greaterThan(0);
        expect(listing!.lastEventAt?.getTime()).to.equal(times[4]!.getTime());
        expect(listing!.compactions).to.equal(1);
        expect(page.cursor).to.equal(null);
      });

      it('does not count a reverted compaction', async function () {
        const s = await create('reverted', `${run}-u1`);
        for (let i = 0; i < 4; i++) await service.appendMessage(s.id, Messages.user(`m${i}`));
        await service.compact(s.id, () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
        const [record] = await service.listCompactions!(s.id);
        await service.revertCompaction!(s.id, record!.id);
        const [listing] = (await repo.listSessions({ idPrefix: s.id })).sessions;
        expect(listing!.compactions).to.equal(0);
        expect(listing!.archivedEvents).to.equal(0);
      });

      it('an empty session has no last event and zero counts', async function () {
        const s = await create('empty', `${run}-u2`);
        const [listing] = (await repo.listSessions({ idPrefix: s.id })).sessions;
        expect(listing).to.deep.include({ version: 0, activeEvents: 0, archivedEvents: 0, lastEventAt: null, compactions: 0 });
      });

      it('pages through every session once, in id order, with the cursor', async function () {
        const ids: string[] = [];
        for (let i = 0; i < 7; i++) ids.push((await create(`page-${String(i).padStart(2, '0')}`, `${run}-u3`)).id);
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page = await repo.listSessions({ userId: `${run}-u3`, limit: 3, cursor });
          seen.push(...page.sessions.map((l) => l.session.id));
          cursor = page.cursor;
          pages++;
        } while (cursor !== null);
        expect(seen).to.deep.equal([...ids].sort());
        expect(pages).to.equal(3);
      });

      it('filters by user exactly', async function () {
        await create('owner-a', `${run}-alice`);
        await create('owner-b', `${run}-alice2`);
        const page = await repo.listSessions({ userId: `${run}-alice` });
        expect(page.sessions.map((l) => l.session.id)).to.deep.equal([`${run}-owner-a`]);
      });

      it('reads the id prefix literally: LIKE wildcards match only themselves', async function () {
        await create('pct%x', `${run}-u4`);
        await create('pctAx', `${run}-u4`);
        await create('und_y', `${run}-u4`);
        await create('undZy', `${run}-u4`);
        const pct = await repo.listSessions({ idPrefix: `${run}-pct%` });
        expect(pct.sessions.map((l) => l.session.id)).to.deep.equal([`${run}-pct%x`]);
        const und = await repo.listSessions({ idPrefix: `${run}-und_` });
        expect(und.sessions.map((l) => l.session.id)).to.deep.equal([`${run}-und_y`]);
      });

      it('with withActiveEvents, gives each listed session its active window as findEvents reads it', async function () {
        const a = await create('window-a', `${run}-u5`);
        const b = await create('window-b', `${run}-u5`);
        await create('window-c', `${run}-u5`);
        for (let i = 0; i < 5; i++) await service.appendMessage(a.id, Messages.user(`a${i}`));
        await service.compact(a.id, () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
        await service.appendMessage(b.id, Messages.assistant('b0'));
        const page = await repo.listSessions({ userId: `${run}-u5`, withActiveEvents: true });
        const windows = page.sessions.map((l) => l.activeWindow?.map((e) => e.id));
        const expected = await Promise.all(
          page.sessions.map(async (l) => (await repo.findEvents(l.session.id, EventFilter.active())).map((e) => e.id)),
        );
        expect(windows).to.deep.equal(expected);
        expect(windows.map((w) => w!.length)).to.deep.equal([2, 1, 0]);
        const without = await repo.listSessions({ userId: `${run}-u5` });
        expect(without.sessions.every((l) => l.activeWindow === undefined)).to.equal(true);
      });

      it('refuses a page size out of range', async function () {
        await expectRejects(repo.listSessions({ limit: 0 }), InvalidArgumentError, 'limit must be an integer from 1 to 1000');
        await expectRejects(repo.listSessions({ limit: 1001 }), InvalidArgumentError, 'limit must be an integer');
      });
    });
  }
});
