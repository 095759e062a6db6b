import { expect } from 'chai';
import {
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  Session,
  SessionEvent,
} from 'session-compaction';
import { isBranchVisible } from 'session-compaction/spi';
import { A, SA, SU, U, expectThrows, texts } from '../support/fixtures.js';

const visible = (filterBranch: string, eventBranch: string | null) =>
  EventFilter.forBranch(filterBranch).matches(U('x', eventBranch));

describe('EventFilter semantics', function () {
  describe('124: branch visibility', function () {
    it('124: filter "orch.researcher" sees root, itself and its ancestor; not a sibling or a child', function () {
      expect(visible('orch.researcher', null)).to.equal(true);
      expect(visible('orch.researcher', 'orch.researcher')).to.equal(true);
      expect(visible('orch.researcher', 'orch')).to.equal(true);
      expect(visible('orch.researcher', 'orch.writer')).to.equal(false);
      expect(visible('orch.researcher', 'orch.researcher.summarizer')).to.equal(false);
    });

    it('124: filter "orch.researcher.summarizer" sees every ancestor and itself', function () {
      for (const b of ['orch', 'orch.researcher', 'orch.researcher.summarizer'])
        expect(visible('orch.researcher.summarizer', b)).to.equal(true);
    });

    it('124: "orch" is not an ancestor of "orchestra.researcher" (dot-path, not string prefix)', function () {
      expect(visible('orchestra.researcher', 'orch')).to.equal(false);
      expect(visible('orchestra.researcher', 'orchestra')).to.equal(true);
      expect(isBranchVisible('orchestra.researcher', 'orch')).to.equal(false);
    });

    it('124: all() matches events of every branch', function () {
      for (const b of [null, 'orch', 'orch.writer', 'x.y.z']) expect(EventFilter.all().matches(U('x', b))).to.equal(true);
    });
  });

  describe('125: branch filtering through the repository and the service', function () {
    let repo: InMemorySessionRepository;
    const SID = 'branch-session';
    beforeEach(async function () {
      repo = new InMemorySessionRepository();
      await repo.save(Session.create({ id: SID, userId: 'u' }));
    });
    const ev = (text: string, branch: string | null, metadata: Record<string, unknown> = {}) =>
      SessionEvent.create({ sessionId: SID, message: Messages.user(text), branch, metadata });

    it('125: [root, orch, orch.researcher, orch.writer] seen from orch.researcher is 3 events', async function () {
      for (const [t, b] of [
        ['root', null],
        ['orch', 'orch'],
        ['res', 'orch.researcher'],
        ['wri', 'orch.writer'],
      ] as const)
        await repo.appendEvent(ev(t, b));
      expect(texts(await repo.findEvents(SID, EventFilter.forBranch('orch.researcher')))).to.deep.equal(['root', 'orch', 'res']);
    });

    it('125: [orch.researcher, orch.writer, orch.researcher.summarizer] seen from orch.researcher is only its own', async function () {
      for (const [t, b] of [
        ['res', 'orch.researcher'],
        ['wri', 'orch.writer'],
        ['sum', 'orch.researcher.summarizer'],
      ] as const)
        await repo.appendEvent(ev(t, b));
      expect(texts(await repo.findEvents(SID, EventFilter.forBranch('orch.researcher')))).to.deep.equal(['res']);
    });

    it('125: root synthetic events are visible to every branch', async function () {
      await repo.appendEvent(ev('s1', null, { synthetic: true }));
      await repo.appendEvent(ev('s2', null, { synthetic: true }));
      await repo.appendEvent(ev('w', 'orch.writer'));
      const seen = await repo.findEvents(SID, EventFilter.forBranch('orch.researcher'));
      expect(seen).to.have.length(2);
      expect(seen.every((e) => e.isSynthetic())).to.equal(true);
    });

    it('125: through the service each agent sees root plus its own events; a sub-agent sees its ancestors', async function () {
      const service = new DefaultSessionService(repo);
      const { id } = await service.create({ userId: 'u' });
      await service.appendMessage(id, Messages.user('root question'));
      await service.appendMessage(id, Messages.user('r1'), { branch: 'orch.researcher' });
      await service.appendMessage(id, Messages.assistant('r2'), { branch: 'orch.researcher' });
      await service.appendMessage(id, Messages.user('w1'), { branch: 'orch.writer' });
      await service.appendMessage(id, Messages.assistant('w2'), { branch: 'orch.writer' });
      expect(texts(await service.getEvents(id, EventFilter.forBranch('orch.researcher')))).to.deep.equal([
        'root question',
        'r1',
        'r2',
      ]);
      expect(texts(await service.getEvents(id, EventFilter.forBranch('orch.writer')))).to.deep.equal([
        'root question',
        'w1',
        'w2',
      ]);

      const { id: id2 } = await service.create({ userId: 'u' });
      await service.appendMessage(id2, Messages.user('o'), { branch: 'orch' });
      await service.appendMessage(id2, Messages.user('r'), { branch: 'orch.researcher' });
      expect(await service.getEvents(id2, EventFilter.forBranch('orch.researcher.sub'))).to.have.length(2);
    });
  });

  it('126: keyword matching is a case-insensitive substring test; empty text never matches', function () {
    const e = U('Spring AI is awesome');
    for (const kw of ['spring ai', 'AWESOME', 'is']) expect(EventFilter.keywordSearch(kw).matches(e)).to.equal(true);
    expect(EventFilter.keywordSearch('memory').matches(e)).to.equal(false);
    expect(EventFilter.keywordSearch('spring').matches(A(''))).to.equal(false);
    expect(EventFilter.keywordSearch('spring').matches(A(null))).to.equal(false);
    expect(EventFilter.all().matches(A(''))).to.equal(true);
  });

  describe('127–128: keyword search and pagination through the repository', function () {
    let repo: InMemorySessionRepository;
    const SID = 'search-session';
    beforeEach(async function () {
      repo = new InMemorySessionRepository();
      await repo.save(Session.create({ id: SID, userId: 'u' }));
    });
    const add = async (...ts: string[]) => {
      for (const t of ts) await repo.appendEvent(SessionEvent.create({ sessionId: SID, message: Messages.user(t) }));
    };

    it('127: "spring" finds the two Spring texts, "SPRING" too, and a miss finds nothing', async function () {
      await add('Spring AI is a great framework', 'Java is verbose', 'Spring Boot is also useful', 'Quarkus is fast');
      const expected = ['Spring AI is a great framework', 'Spring Boot is also useful'];
      expect(texts(await repo.findEvents(SID, EventFilter.keywordSearch('spring')))).to.deep.equal(expected);
      expect(await repo.findEvents(SID, EventFilter.keywordSearch('SPRING'))).to.have.length(2);
      expect(await repo.findEvents(SID, EventFilter.keywordSearch('kotlin'))).to.deep.equal([]);
    });

    it('128: pages of 3 over 7 hits are [1..3], [4..6], [7]', async function () {
      await add(...Array.from({ length: 7 }, (_, i) => `spring message ${i + 1}`));
      const page = async (p: number) => texts(await repo.findEvents(SID, EventFilter.keywordSearch('spring', p, 3)));
      expect(await page(0)).to.deep.equal(['spring message 1', 'spring message 2', 'spring message 3']);
      expect(await page(1)).to.deep.equal(['spring message 4', 'spring message 5', 'spring message 6']);
      expect(await page(2)).to.deep.equal(['spring message 7']);
    });

    it('128: a page past the end is empty', async function () {
      await add('spring 1', 'spring 2');
      expect(await repo.findEvents(SID, EventFilter.keywordSearch('spring', 5, 10))).to.deep.equal([]);
    });

    it('128: the default page is the first 10 hits, oldest first', async function () {
      await add(...Array.from({ length: 15 }, (_, i) => `entry ${i + 1}`));
      expect(texts(await repo.findEvents(SID, EventFilter.keywordSearch('entry')))).to.deep.equal(
        Array.from({ length: 10 }, (_, i) => `entry ${i + 1}`),
      );
    });

    it('128: paging counts matches only: 5 hits interleaved with 5 misses give 5 results', async function () {
      for (let i = 0; i < 5; i++) await add(`hit ${i}`, `other ${i}`);
      expect(texts(await repo.findEvents(SID, EventFilter.keywordSearch('hit')))).to.deep.equal(
        [0, 1, 2, 3, 4].map((i) => `hit ${i}`),
      );
    });
  });

  it('129: keywords ANY and ALL', function () {
    const any = EventFilter.keywordsSearch(['actually', 'instead'], 'any');
    expect(any.matches(U('I meant instead of that'))).to.equal(true);
    expect(any.matches(U('no relation here'))).to.equal(false);
    const all = EventFilter.keywordsSearch(['actually', 'instead'], 'all');
    expect(all.matches(U('actually, use this instead'))).to.equal(true);
    expect(all.matches(U("actually, that's fine"))).to.equal(false);
  });

  it('129: keywords normalisation — default mode any, lower-cased, blanks dropped, empty means unset', function () {
    const f = EventFilter.of({ keywords: ['spring', 'boot'] });
    expect(f.matchMode).to.equal('any');
    expect(EventFilter.of({ keywords: ['SPRING'] }).matches(U('spring ai is great'))).to.equal(true);
    expect(EventFilter.of({ keywords: ['spring'] }).matches(U(''))).to.equal(false);
    const empty = EventFilter.of({ keywords: [] });
    expect(empty.keywords).to.equal(undefined);
    expect(empty.matchMode).to.equal(undefined);
    expect(empty.matches(U('anything'))).to.equal(true);
    expect(EventFilter.of({ keywords: ['spring', '  ', ''] }).keywords).to.deep.equal(['spring']);
    expect(EventFilter.of({ matchMode: 'all' }).matchMode).to.equal(undefined);
  });

  it('130: pattern search uses the RegExp as given (word boundaries, flags, AND with keyword)', function () {
    const decided = EventFilter.patternSearch(/\bwe decided\b/);
    expect(decided.matches(U('we decided to go with option B'))).to.equal(true);
    expect(decided.matches(U("we haven't decided yet"))).to.equal(false);
    expect(EventFilter.patternSearch(/remember that/i).matches(U('Remember That we use Postgres'))).to.equal(true);
    const sensitive = EventFilter.patternSearch(/Remember this/);
    expect(sensitive.matches(U('remember this'))).to.equal(false);
    expect(sensitive.matches(U('Remember this'))).to.equal(true);
    expect(EventFilter.patternSearch(/.+/).matches(U(''))).to.equal(false);
    const both = EventFilter.of({ keyword: 'decided', pattern: /option [A-Z]/ });
    expect(both.matches(U('we decided on option B'))).to.equal(true);
    expect(both.matches(U('we decided nothing'))).to.equal(false);
    expect(both.matches(U('option B is available'))).to.equal(false);
  });

  it('130 (port): a global RegExp gives the same answer for every event (no lastIndex state)', function () {
    const f = EventFilter.patternSearch(/ab/g);
    expect([U('ab'), U('ab'), U('ab')].map((e) => f.matches(e))).to.deep.equal([true, true, true]);
  });

  it('130 (port): a pattern must be a RegExp, never a string', function () {
    expectThrows(() => EventFilter.of({ pattern: '.*' as unknown as RegExp }), InvalidArgumentError, 'pattern must be a RegExp');
  });

  it('131: keyword normalisation', function () {
    expect(EventFilter.of({ keyword: '   ' }).keyword).to.equal(undefined);
    expect(EventFilter.of({ keyword: '' }).keyword).to.equal(undefined);
    expect(EventFilter.of({}).keyword).to.equal(undefined);
    expect(EventFilter.of({ keyword: 'Spring AI' }).keyword).to.equal('spring ai');
  });

  it('131: lastN and paging validation messages', function () {
    expectThrows(() => EventFilter.lastN(0), InvalidArgumentError, 'lastN must be greater than 0');
    expectThrows(() => EventFilter.lastN(-1), InvalidArgumentError, 'lastN must be greater than 0');
    expect(EventFilter.lastN(5).lastN).to.equal(5);
    expectThrows(() => EventFilter.of({ pageSize: 0 }), InvalidArgumentError, 'pageSize must be greater than 0');
    expectThrows(() => EventFilter.of({ pageSize: -1 }), InvalidArgumentError, 'pageSize must be greater than 0');
    expectThrows(() => EventFilter.of({ page: -1, pageSize: 10 }), InvalidArgumentError, 'page must be >= 0');
    expectThrows(() => EventFilter.of({ page: 1 }), InvalidArgumentError, 'pageSize must be set when page is set');
    expectThrows(
      () => EventFilter.of({ lastN: 5, pageSize: 10 }),
      InvalidArgumentError,
      'lastN and page/pageSize are mutually exclusive',
    );
    expectThrows(
      () => EventFilter.of({ lastN: 5, page: 0, pageSize: 10 }),
      InvalidArgumentError,
      'lastN and page/pageSize are mutually exclusive',
    );
  });

  it('131: pageSize alone means page 0; page and size are kept; message types normalise', function () {
    const f = EventFilter.of({ pageSize: 10 });
    expect(f.page).to.equal(0);
    expect(f.pageSize).to.equal(10);
    const g = EventFilter.of({ page: 2, pageSize: 10 });
    expect([g.page, g.pageSize]).to.deep.equal([2, 10]);
    expect(EventFilter.of({ messageTypes: [] }).messageTypes).to.equal(undefined);
    expect(EventFilter.of({ messageTypes: ['user'] }).messageTypes).to.deep.equal(['user']);
    expect(EventFilter.of({ messageTypes: ['user'] }).matches(A('x'))).to.equal(false);
  });

  it('132: merge — the other filter’s set fields win', function () {
    expect(EventFilter.lastN(10).merge(EventFilter.lastN(3)).lastN).to.equal(3);
    expect(EventFilter.forBranch('orch').merge(EventFilter.forBranch('orch.researcher')).branch).to.equal('orch.researcher');
    const from = new Date('2025-01-01T00:00:00Z');
    const to = new Date('2025-02-01T00:00:00Z');
    const merged = EventFilter.of({ keyword: 'a', messageTypes: ['user'] }).merge(
      EventFilter.of({
        keyword: 'b',
        keywords: ['x'],
        matchMode: 'all',
        pattern: /p/,
        from,
        to,
        messageTypes: ['assistant'],
        page: 1,
        pageSize: 5,
      }),
    );
    expect(merged.keyword).to.equal('b');
    expect(merged.keywords).to.deep.equal(['x']);
    expect(merged.matchMode).to.equal('all');
    expect(merged.pattern?.source).to.equal('p');
    expect(merged.from?.getTime()).to.equal(from.getTime());
    expect(merged.to?.getTime()).to.equal(to.getTime());
    expect(merged.messageTypes).to.deep.equal(['assistant']);
    expect([merged.page, merged.pageSize]).to.deep.equal([1, 5]);
  });

  it('132: merge — unset fields of the other filter keep the base', function () {
    expect(EventFilter.lastN(5).merge(EventFilter.all()).lastN).to.equal(5);
    expect(EventFilter.forBranch('orch.writer').merge(EventFilter.all()).branch).to.equal('orch.writer');
  });

  it('132: merge — excludeSynthetic and excludeArchived are OR-ed in both directions', function () {
    expect(EventFilter.realOnly().merge(EventFilter.all()).excludeSynthetic).to.equal(true);
    expect(EventFilter.all().merge(EventFilter.realOnly()).excludeSynthetic).to.equal(true);
    expect(EventFilter.active().merge(EventFilter.all()).excludeArchived).to.equal(true);
    expect(EventFilter.all().merge(EventFilter.active()).excludeArchived).to.equal(true);
    expect(EventFilter.all().merge(EventFilter.all()).excludeArchived).to.equal(false);
  });

  it('132: all() ⊕ all() equals all(); an invalid combination throws at merge time', function () {
    expect(EventFilter.all().merge(EventFilter.all()).equals(EventFilter.all())).to.equal(true);
    expect(EventFilter.all().equals(EventFilter.active())).to.equal(false);
    expectThrows(() => EventFilter.keywordSearch('x').merge(EventFilter.lastN(3)), InvalidArgumentError, 'mutually exclusive');
  });

  it('excludeSynthetic, excludeArchived and the inclusive time range', function () {
    expect(EventFilter.realOnly().matches(SU())).to.equal(false);
    expect(EventFilter.realOnly().matches(SA('s'))).to.equal(false);
    expect(EventFilter.active().matches(U('x').asArchived())).to.equal(false);
    expect(EventFilter.all().matches(U('x').asArchived())).to.equal(true);
    const t = new Date('2025-05-05T00:00:00Z');
    const at = U('x', null).with({ timestamp: t });
    expect(EventFilter.of({ from: t, to: t }).matches(at)).to.equal(true);
    expect(EventFilter.of({ from: new Date(t.getTime() + 1) }).matches(at)).to.equal(false);
    expect(EventFilter.of({ to: new Date(t.getTime() - 1) }).matches(at)).to.equal(false);
  });
});
