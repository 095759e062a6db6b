import { expect } from 'chai';
import fc from 'fast-check';
import {
  Bm25Retriever,
  CompactionResult,
  DefaultSessionService,
  EventFilter,
  IllegalStateError,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  SessionEvent,
  SlidingWindowCompactionStrategy,
  type Message,
  type SessionService,
} from 'session-compaction';
import { expectRejects } from '../support/fixtures.js';
import { propertyParams } from '../support/arbitraries.js';

const silent = { error() {}, warn() {}, info() {}, debug() {} };

/** DefaultSessionService that records how the log is read, to tell an incremental update from a rebuild. */
class CountingService extends DefaultSessionService {
  readonly reads: EventFilter[] = [];
  override async getEvents(sessionId: string, filter: EventFilter = EventFilter.all()) {
    this.reads.push(filter);
    return super.getEvents(sessionId, filter);
  }
  fullReads(): number {
    return this.reads.filter((f) => f.lastN === undefined && !f.excludeArchived).length;
  }
}

describe('Bm25Retriever', function () {
  let repository: InMemorySessionRepository;
  let service: CountingService;
  let retriever: Bm25Retriever;

  beforeEach(function () {
    repository = new InMemorySessionRepository();
    service = new CountingService(repository, { logger: silent });
    retriever = new Bm25Retriever({ sessionService: service });
  });
  afterEach(function () {
    retriever.close();
  });

  async function session(id: string, userId: string, ...messages: Array<Message | [Message, string]>) {
    await service.create({ id, userId });
    for (const m of messages) {
      const [message, branch] = Array.isArray(m) ? m : [m, null];
      await service.appendMessage(id, message, { branch });
    }
  }

  /** Archives everything but the newest `keep` events, as a sliding window would. */
  async function archiveAllBut(id: string, keep: number) {
    await service.compact(id, () => true, new SlidingWindowCompactionStrategy({ maxEvents: keep }));
  }

  const texts = (hits: { event: SessionEvent }[]) => hits.map((h) => h.event.text);

  const chat = [
    Messages.user('My dog is called Biscuit and he loves the beach.'),
    Messages.assistant('Biscuit sounds like a happy dog!'),
    Messages.user('I work as a nurse at the children hospital.'),
    Messages.assistant('Nursing is demanding work.'),
    Messages.user('What should I cook tonight?'),
    Messages.assistant('Try a mushroom risotto.'),
  ];

  describe('ranking', function () {
    it('finds archived events by their words, best first', async function () {
      await session('s', 'alice', ...chat);
      await archiveAllBut('s', 2);
      const hits = await retriever.retrieve({ sessionId: 's', query: 'where does the dog Biscuit go, the beach?' });
      expect(texts(hits)[0]).to.equal('My dog is called Biscuit and he loves the beach.');
      expect(texts(hits)).to.include('Biscuit sounds like a happy dog!');
      expect(hits.map((h) => h.score)).to.deep.equal([...hits.map((h) => h.score)].sort((a, b) => b - a));
    });

    it('leaves out events of the active window unless includeActive is set', async function () {
      await session('s', 'alice', ...chat);
      await archiveAllBut('s', 2);
      expect(await retriever.retrieve({ sessionId: 's', query: 'mushroom risotto' })).to.deep.equal([]);
      const withActive = await retriever.retrieve({ sessionId: 's', query: 'mushroom risotto', includeActive: true });
      expect(texts(withActive)[0]).to.equal('Try a mushroom risotto.');
    });

    it('returns at most `limit` hits (default 20)', async function () {
      await session('s', 'alice', ...Array.from({ length: 30 }, (_, i) => Messages.user(`note ${i} about apples`)));
      expect(await retriever.retrieve({ sessionId: 's', query: 'apples', includeActive: true })).to.have.length(20);
      expect(await retriever.retrieve({ sessionId: 's', query: 'apples', includeActive: true, limit: 3 })).to.have.length(3);
    });

    it('returns equal scores newest first, and the limit keeps the newest of them', async function () {
      await session('s', 'alice', ...Array.from({ length: 8 }, (_, i) => Messages.user(`note ${i} about apples`)));
      await archiveAllBut('s', 1);
      const hits = await retriever.retrieve({ sessionId: 's', query: 'apples', limit: 3 });
      expect(texts(hits)).to.deep.equal(['note 6 about apples', 'note 5 about apples', 'note 4 about apples']);
    });

    it('matches a longer word by its beginning (paint finds painting)', async function () {
      await session('s', 'alice', Messages.user('I finished my painting of a sunset'));
      const hits = await retriever.retrieve({ sessionId: 's', query: 'paint', includeActive: true });
      expect(texts(hits)).to.deep.equal(['I finished my painting of a sunset']);
    });

    it('finds tool results and tool-call arguments, not only chat text', async function () {
      await session(
        's',
        'alice',
        Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'lookup', '{"reservation":"ZFA04Y"}')] }),
        Messages.tool([Messages.toolResponse('c1', 'lookup', 'flight HAT170 departs 2024-05-16')]),
      );
      const byArgument = await retriever.retrieve({ sessionId: 's', query: 'ZFA04Y', includeActive: true });
      const byResult = await retriever.retrieve({ sessionId: 's', query: 'HAT170', includeActive: true });
      expect(byArgument[0]!.event.messageType).to.equal('assistant');
      expect(byResult[0]!.event.messageType).to.equal('tool');
    });

    it('does not index shadow prompts (the synthetic user message opening a summary)', async function () {
      await service.create({ id: 's', userId: 'alice' });
      const synthetic = { synthetic: true, compactionSource: 'test' };
      await service.appendMessage('s', Messages.user('Summarize the conversation we had so far.'), { metadata: synthetic });
      await service.appendMessage('s', Messages.assistant('The user summarized their tax return.'), { metadata: synthetic });
      const hits = await retriever.retrieve({ sessionId: 's', query: 'summarize conversation', includeActive: true });
      expect(texts(hits)).to.deep.equal(['The user summarized their tax return.']);
    });
  });

  describe('requests', function () {
    it('returns [] for an empty or blank query, without reading the log', async function () {
      await session('s', 'alice', ...chat);
      expect(await retriever.retrieve({ sessionId: 's', query: '' })).to.deep.equal([]);
      expect(await retriever.retrieve({ sessionId: 's', query: '  \n ' })).to.deep.equal([]);
      expect(service.reads).to.deep.equal([]);
    });

    it('returns [] for a missing session', async function () {
      expect(await retriever.retrieve({ sessionId: 'nope', query: 'dog' })).to.deep.equal([]);
      expect(await retriever.retrieve({ sessionId: 'nope', query: 'dog', userId: 'alice' })).to.deep.equal([]);
    });

    it('rejects invalid requests with the field named', async function () {
      await expectRejects(retriever.retrieve({ sessionId: ' ', query: 'x' }), InvalidArgumentError, 'sessionId');
      await expectRejects(retriever.retrieve({ sessionId: 's', query: 'x', limit: 0 }), InvalidArgumentError, 'limit');
      await expectRejects(
        retriever.retrieve({ sessionId: 's', query: 'x', scope: 'all' as 'user' }),
        InvalidArgumentError,
        'scope',
      );
      await expectRejects(
        retriever.retrieve({ sessionId: 's', query: 'x', scope: 'user' }),
        InvalidArgumentError,
        "userId is required for scope 'user'",
      );
    });

    it('refuses to construct without a service or with a non-positive bound', function () {
      expect(() => new Bm25Retriever({ sessionService: undefined as unknown as SessionService })).to.throw(
        InvalidArgumentError,
        'sessionService',
      );
      expect(() => new Bm25Retriever({ sessionService: service, maxIndexedSessions: 0 })).to.throw(
        InvalidArgumentError,
        'maxIndexedSessions',
      );
    });
  });

  describe('privacy', function () {
    beforeEach(async function () {
      await session('a1', 'alice', Messages.user('alice secret: the vault code is 4711'));
      await session('a2', 'alice', Messages.user('alice likes the vault in Zurich'));
      await session('b1', 'bob', Messages.user('bob secret: the vault code is 9999'));
    });

    it('refuses a session of another user with the access-denied message, in either scope', async function () {
      await expectRejects(
        retriever.retrieve({ sessionId: 'b1', userId: 'alice', query: 'vault', includeActive: true }),
        IllegalStateError,
        "Session 'b1' does not belong to user 'alice'. Access denied.",
      );
      await expectRejects(
        retriever.retrieve({ sessionId: 'b1', userId: 'alice', scope: 'user', query: 'vault' }),
        IllegalStateError,
        'Access denied',
      );
    });

    it("scope 'session' never leaves the session", async function () {
      const hits = await retriever.retrieve({ sessionId: 'a1', query: 'vault code', includeActive: true });
      expect(hits.map((h) => h.event.sessionId)).to.deep.equal(['a1']);
    });

    it("scope 'user' searches every session of that user and none of another's", async function () {
      const hits = await retriever.retrieve({ sessionId: 'a1', userId: 'alice', scope: 'user', query: 'vault code' });
      expect(hits.map((h) => h.event.sessionId).sort()).to.deep.equal(['a2']);
      const all = await retriever.retrieve({
        sessionId: 'a1',
        userId: 'alice',
        scope: 'user',
        query: 'vault code',
        includeActive: true,
      });
      expect(all.map((h) => h.event.sessionId).sort()).to.deep.equal(['a1', 'a2']);
      expect(all.map((h) => h.event.text).join(' ')).not.to.include('9999');
    });

    it('a session id deleted and created again by another user never returns the old log', async function () {
      expect(await retriever.retrieve({ sessionId: 'b1', query: 'vault', includeActive: true })).to.have.length(1);
      // The SPI delete: no tombstone and no sessionErased notice, so only the index's own check protects the new owner.
      await repository.delete('b1');
      await session('b1', 'carol', Messages.user('carol has a garden'));
      const hits = await retriever.retrieve({ sessionId: 'b1', query: 'vault garden', includeActive: true });
      expect(texts(hits)).to.deep.equal(['carol has a garden']);
    });

    it("property: 'user' scope returns only that user's events, 'session' scope only that session's", async function () {
      const words = ['alpha', 'beta', 'gamma', 'delta', 'omega'];
      const textArb = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 4 }).map((w) => w.join(' '));
      const logArb = fc.array(fc.record({ owner: fc.constantFrom('u1', 'u2'), session: fc.nat(3), text: textArb }), {
        maxLength: 25,
      });
      await fc.assert(
        fc.asyncProperty(logArb, textArb, fc.constantFrom('u1', 'u2'), async (log, query, caller) => {
          const repo = new InMemorySessionRepository();
          const svc = new DefaultSessionService(repo, { logger: silent });
          const r = new Bm25Retriever({ sessionService: svc, maxIndexedSessions: 3 });
          const owners = new Map<string, string>();
          for (const entry of log) {
            const id = `${entry.owner}-s${entry.session}`;
            if (!owners.has(id)) {
              owners.set(id, entry.owner);
              await svc.create({ id, userId: entry.owner });
            }
            await svc.appendMessage(id, Messages.user(entry.text));
          }
          for (const id of owners.keys()) {
            const own = owners.get(id) === caller;
            const user = own
              ? await r.retrieve({ sessionId: id, userId: caller, scope: 'user', query, includeActive: true, limit: 100 })
              : [];
            for (const hit of user) expect(owners.get(hit.event.sessionId)).to.equal(caller);
            const single = await r.retrieve({ sessionId: id, query, includeActive: true, limit: 100 });
            for (const hit of single) expect(hit.event.sessionId).to.equal(id);
          }
          r.close();
        }),
        propertyParams(60),
      );
    });
  });

  describe('branches', function () {
    beforeEach(async function () {
      await session(
        's',
        'alice',
        Messages.user('root question about comets'),
        [Messages.assistant('orchestrator notes on comets'), 'orch'],
        [Messages.assistant('researcher found comets data'), 'orch.researcher'],
        [Messages.assistant('writer drafted comets story'), 'orch.writer'],
      );
    });

    it('the root conversation sees root events only', async function () {
      const hits = await retriever.retrieve({ sessionId: 's', query: 'comets', includeActive: true });
      expect(texts(hits)).to.deep.equal(['root question about comets']);
    });

    it('a branch sees root events, its own and its ancestors, never siblings', async function () {
      const hits = await retriever.retrieve({ sessionId: 's', query: 'comets', includeActive: true, branch: 'orch.researcher' });
      expect(texts(hits).sort()).to.deep.equal(
        ['orchestrator notes on comets', 'researcher found comets data', 'root question about comets'].sort(),
      );
    });
  });

  describe('keeping the index current', function () {
    it('indexes only the new events after appends: no full read of the log', async function () {
      await session('s', 'alice', ...chat);
      await retriever.retrieve({ sessionId: 's', query: 'dog', includeActive: true });
      const before = service.fullReads();
      await service.appendMessage('s', Messages.user('We adopted a parrot named Kiwi.'));
      await service.appendMessage('s', Messages.assistant('Kiwi is a lovely name.'));
      const hits = await retriever.retrieve({ sessionId: 's', query: 'parrot Kiwi', includeActive: true });
      expect(texts(hits).slice(0, 2)).to.deep.equal(['We adopted a parrot named Kiwi.', 'Kiwi is a lovely name.']);
      expect(service.fullReads()).to.equal(before);
      expect(service.reads.at(-1)!.lastN).to.equal(3);
    });

    it('reads nothing but the version when the log has not changed', async function () {
      await session('s', 'alice', ...chat);
      await retriever.retrieve({ sessionId: 's', query: 'dog', includeActive: true });
      const reads = service.reads.length;
      await retriever.retrieve({ sessionId: 's', query: 'nurse', includeActive: true });
      expect(service.reads.length).to.equal(reads);
    });

    it('sees a compaction: events archived since the last search become recallable', async function () {
      await session('s', 'alice', ...chat);
      expect(await retriever.retrieve({ sessionId: 's', query: 'nurse hospital' })).to.deep.equal([]);
      await archiveAllBut('s', 2);
      const hits = await retriever.retrieve({ sessionId: 's', query: 'nurse hospital' });
      expect(texts(hits)[0]).to.equal('I work as a nurse at the children hospital.');
    });

    it('forgets the old words of an event rewritten in place (e.g. redacted)', async function () {
      await session('s', 'alice', Messages.user('my card number is 4111 1111'), Messages.assistant('noted'));
      expect(texts(await retriever.retrieve({ sessionId: 's', query: '4111', includeActive: true }))[0]).to.equal(
        'my card number is 4111 1111',
      );
      const [card, reply] = await service.getEvents('s');
      const redacted = card!.with({ message: Messages.user('my card number is [redacted]') });
      const version = await repository.getEventVersion('s');
      expect(await repository.compactEvents('s', [], [redacted, reply!], version)).to.equal(true);
      expect(await retriever.retrieve({ sessionId: 's', query: '4111', includeActive: true })).to.deep.equal([]);
      expect(texts(await retriever.retrieve({ sessionId: 's', query: 'redacted card', includeActive: true }))[0]).to.equal(
        'my card number is [redacted]',
      );
    });

    it('drops events a compaction removed (a superseded summary)', async function () {
      await session('s', 'alice', Messages.user('q1'));
      const summary = SessionEvent.create({
        sessionId: 's',
        message: Messages.assistant('summary mentions zeppelins'),
        metadata: { synthetic: true },
      });
      await service.appendEvent(summary);
      expect(texts(await retriever.retrieve({ sessionId: 's', query: 'zeppelins', includeActive: true }))).to.include(
        'summary mentions zeppelins',
      );
      // A consolidation replaces a summary: the old one is in neither list and leaves the log.
      const [q1] = await service.getEvents('s');
      expect(await repository.compactEvents('s', [], [q1!], await repository.getEventVersion('s'))).to.equal(true);
      expect(await retriever.retrieve({ sessionId: 's', query: 'zeppelins', includeActive: true })).to.deep.equal([]);
    });

    it('sees an archive purge no event told it about (another process ran retention): the purged events are gone', async function () {
      await session('s', 'alice', ...chat);
      await archiveAllBut('s', 2);
      expect(texts(await retriever.retrieve({ sessionId: 's', query: 'dog Biscuit' }))).to.include(
        'Biscuit sounds like a happy dog!',
      );
      const version = await repository.getEventVersion('s');
      const purged = await repository.purgeArchivedEvents('s', { keepLast: 0, limit: 100 });
      expect(purged).to.have.length(4);
      expect(await repository.getEventVersion('s')).to.equal(version);
      expect(await retriever.retrieve({ sessionId: 's', query: 'dog Biscuit nurse' })).to.deep.equal([]);
    });

    it('sees a purge followed by appends, though the version moved by exactly the appends', async function () {
      await session('s', 'alice', ...chat);
      await archiveAllBut('s', 2);
      await retriever.retrieve({ sessionId: 's', query: 'dog' });
      await repository.purgeArchivedEvents('s', { keepLast: 0, limit: 100 });
      await service.appendMessage('s', Messages.user('Another dog walked by.'));
      const hits = await retriever.retrieve({ sessionId: 's', query: 'dog Biscuit', includeActive: true });
      expect(texts(hits)).to.deep.equal(['Another dog walked by.']);
    });

    it('reads only the new events after appends when nothing was purged (the purge generation did not move)', async function () {
      await session('s', 'alice', ...chat);
      await archiveAllBut('s', 2);
      await retriever.retrieve({ sessionId: 's', query: 'dog' });
      const before = service.fullReads();
      await service.appendMessage('s', Messages.user('Another dog walked by.'));
      await retriever.retrieve({ sessionId: 's', query: 'dog', includeActive: true });
      expect(service.fullReads()).to.equal(before);
    });

    it('after a purge reads the whole log once, then appends take the tail path again', async function () {
      await session('s', 'alice', ...chat);
      await archiveAllBut('s', 2);
      await retriever.retrieve({ sessionId: 's', query: 'dog' });
      await repository.purgeArchivedEvents('s', { keepLast: 1, limit: 100 });
      const before = service.fullReads();
      await retriever.retrieve({ sessionId: 's', query: 'dog' });
      expect(service.fullReads()).to.equal(before + 1);
      await service.appendMessage('s', Messages.user('Another dog walked by.'));
      await retriever.retrieve({ sessionId: 's', query: 'dog', includeActive: true });
      expect(service.fullReads()).to.equal(before + 1);
    });

    it("follows this process's compaction from what it reported, without reading the log, also when appends came after the last search", async function () {
      await session('s', 'alice', ...chat);
      await retriever.retrieve({ sessionId: 's', query: 'dog', includeActive: true });
      // The turn's reply lands after the search, then the compaction runs: the index is one append behind it.
      await service.appendMessage('s', Messages.assistant('A parrot named Kiwi joined the family.'));
      const before = service.fullReads();
      await archiveAllBut('s', 2);
      await service.appendMessage('s', Messages.user('Kiwi says hello.'));
      const hits = await retriever.retrieve({ sessionId: 's', query: 'nurse hospital Kiwi', includeActive: true, limit: 100 });
      expect(service.fullReads()).to.equal(before);
      const fresh = new Bm25Retriever({ sessionService: service });
      const again = await fresh.retrieve({ sessionId: 's', query: 'nurse hospital Kiwi', includeActive: true, limit: 100 });
      expect(hits.map((h) => [h.event.id, h.event.archived, h.score.toFixed(9)])).to.deep.equal(
        again.map((h) => [h.event.id, h.event.archived, h.score.toFixed(9)]),
      );
      fresh.close();
    });

    it("follows this process's consolidation that drops the summary opening the window, without reading the log", async function () {
      await session('s', 'alice', ...chat);
      await retriever.retrieve({ sessionId: 's', query: 'dog', includeActive: true });
      const summary = SessionEvent.create({
        sessionId: 's',
        message: Messages.assistant('summary mentions zeppelins'),
        metadata: { synthetic: true },
      });
      // A summarising compaction: the four oldest archived, the summary opens the window.
      await service.compact(
        's',
        () => true,
        async (r) => new CompactionResult([summary, ...r.events.slice(4)], r.events.slice(0, 4), 0),
      );
      expect(texts(await retriever.retrieve({ sessionId: 's', query: 'zeppelins', includeActive: true }))).to.include(
        'summary mentions zeppelins',
      );
      const before = service.fullReads();
      // A consolidation: the summary is in neither list (it leaves the log), the oldest message is archived.
      await service.compact(
        's',
        () => true,
        async (r) => new CompactionResult(r.events.slice(2), r.events.slice(1, 2), 0),
      );
      expect(await retriever.retrieve({ sessionId: 's', query: 'zeppelins', includeActive: true })).to.deep.equal([]);
      expect(service.fullReads()).to.equal(before);
      const ids = (await service.getEvents('s')).map((e) => e.id);
      const fresh = new Bm25Retriever({ sessionService: service });
      const around = async (r: Bm25Retriever) =>
        (await r.findEventNeighbours('s', ids, 1)).map((run) => run.map((e) => [e.id, e.archived]));
      expect(await around(retriever)).to.deep.equal(await around(fresh));
      fresh.close();
    });

    it('reads the log when a compaction of another process came between (the versions do not add up)', async function () {
      await session('s', 'alice', ...chat);
      await retriever.retrieve({ sessionId: 's', query: 'dog', includeActive: true });
      const other = new DefaultSessionService(repository, { logger: silent });
      await other.compact('s', () => true, new SlidingWindowCompactionStrategy({ maxEvents: 4 }));
      await archiveAllBut('s', 2);
      const before = service.fullReads();
      const hits = await retriever.retrieve({ sessionId: 's', query: 'nurse hospital', limit: 100 });
      expect(service.fullReads()).to.be.greaterThan(before);
      expect(texts(hits)[0]).to.equal('I work as a nurse at the children hospital.');
    });

    it("drops events purged by this process's retention at once, and reads nothing but the state afterwards", async function () {
      await session('s', 'alice', ...chat);
      await archiveAllBut('s', 2);
      expect(texts(await retriever.retrieve({ sessionId: 's', query: 'dog Biscuit' }))).to.include(
        'Biscuit sounds like a happy dog!',
      );
      const reads = service.reads.length;
      const report = await service.applyRetention({ maxArchivedEventsPerSession: 1 }, { batchSize: 2 });
      expect(report.archivedEventsRemoved).to.equal(3);
      const left = (await repository.findEvents('s')).filter((e) => e.archived).map((e) => e.text);
      const hits = await retriever.retrieve({ sessionId: 's', query: 'dog Biscuit nurse hospital', limit: 100 });
      expect(service.reads.length).to.equal(reads);
      for (const hit of hits) expect(left).to.include(hit.event.text);
    });

    it('builds a cold index in pages of readPageSize, never in one read of the whole log', async function () {
      await session('s', 'alice', ...chat, ...chat, ...chat);
      const paged = new Bm25Retriever({ sessionService: service, readPageSize: 4 });
      const reads = service.reads.length;
      const hits = await paged.retrieve({ sessionId: 's', query: 'nurse', includeActive: true, limit: 100 });
      const pages = service.reads.slice(reads);
      expect(pages.map((f) => f.pageSize)).to.deep.equal(pages.map(() => 4));
      expect(pages).to.have.length(Math.floor((chat.length * 3) / 4) + 1);
      const whole = await retriever.retrieve({ sessionId: 's', query: 'nurse', includeActive: true, limit: 100 });
      expect(hits.map((h) => h.event.id)).to.deep.equal(whole.map((h) => h.event.id));
      paged.close();
    });
    it('sees a compaction no event told it about that drops a summary and puts the new one last (one version step, like an append)', async function () {
      const old = SessionEvent.create({
        sessionId: 's',
        message: Messages.assistant('old summary mentions zeppelins'),
        metadata: { synthetic: true },
      });
      await service.create({ id: 's', userId: 'alice' });
      await service.appendEvent(old);
      await service.appendMessage('s', Messages.user('q1'));
      await service.appendMessage('s', Messages.assistant('a1'));
      expect(texts(await retriever.retrieve({ sessionId: 's', query: 'zeppelins', includeActive: true }))).to.deep.equal([
        'old summary mentions zeppelins',
      ]);
      // Another process consolidates: the old summary leaves the log, the new one follows the retained turn.
      const [, q1, a1] = await service.getEvents('s');
      const next = SessionEvent.create({
        sessionId: 's',
        message: Messages.assistant('new summary'),
        metadata: { synthetic: true },
      });
      expect(await repository.compactEvents('s', [], [q1!, a1!, next], await repository.getEventVersion('s'))).to.equal(true);
      expect(await retriever.retrieve({ sessionId: 's', query: 'zeppelins', includeActive: true })).to.deep.equal([]);
      expect(texts(await retriever.retrieve({ sessionId: 's', query: 'new summary', includeActive: true }))).to.include(
        'new summary',
      );
    });

    it('works with a service that cannot report versions, by diffing a full read', async function () {
      await session('s', 'alice', ...chat);
      const plain: SessionService = {
        create: (r) => service.create(r),
        findById: (id) => service.findById(id),
        findByUserId: (u) => service.findByUserId(u),
        delete: (id) => service.delete(id),
        deleteExpiredSessions: (d) => service.deleteExpiredSessions(d),
        appendEvent: (e) => service.appendEvent(e),
        appendMessage: (id, m, o) => service.appendMessage(id, m, o),
        getEvents: (id, f) => service.getEvents(id, f),
        getMessages: (id) => service.getMessages(id),
        compact: (id, t, s) => service.compact(id, t, s),
        eraseUser: (u) => service.eraseUser(u),
        redactEvent: (id, e, o) => service.redactEvent(id, e, o),
        purgeDerived: (id, e, o) => service.purgeDerived(id, e, o),
        applyRetention: (p, o) => service.applyRetention(p, o),
        previewCompaction: (id, t, s, o) => service.previewCompaction(id, t, s, o),
        verifyCoverage: (id) => service.verifyCoverage(id),
        updateMetadata: (id, u) => service.updateMetadata(id, u),
        events: service.events,
      };
      const r = new Bm25Retriever({ sessionService: plain });
      const risotto = async () =>
        texts(await r.retrieve({ sessionId: 's', query: 'risotto', includeActive: true })).filter((t) => t!.includes('risotto'));
      expect(await risotto()).to.have.length(1);
      await service.appendMessage('s', Messages.user('risotto again tomorrow'));
      expect(await risotto()).to.have.length(2);
    });
    it("property: an index kept current through appends, compactions (this and another process's) and purges ranks and places events exactly as one built from scratch", async function () {
      const words = ['apple', 'pear', 'plum', 'fig', 'kiwi', 'lime'];
      const textArb = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 5 }).map((w) => w.join(' '));
      const stepArb = fc.oneof(
        { weight: 6, arbitrary: fc.record({ append: textArb, branch: fc.constantFrom(null, null, null, 'b') }) },
        { weight: 1, arbitrary: fc.record({ keep: fc.integer({ min: 1, max: 4 }) }) },
        { weight: 2, arbitrary: fc.record({ search: textArb }) },
        { weight: 1, arbitrary: fc.record({ purge: fc.integer({ min: 0, max: 3 }) }) },
        { weight: 1, arbitrary: fc.record({ foreign: fc.integer({ min: 1, max: 4 }) }) },
      );
      await fc.assert(
        fc.asyncProperty(fc.array(stepArb, { maxLength: 30 }), textArb, async (steps, query) => {
          const repo = new InMemorySessionRepository();
          const svc = new DefaultSessionService(repo, { logger: silent });
          // Another process's service on the same store: its compactions are not reported to `live`.
          const foreign = new DefaultSessionService(repo, { logger: silent });
          const live = new Bm25Retriever({ sessionService: svc });
          await svc.create({ id: 's', userId: 'u' });
          for (const step of steps) {
            if ('append' in step) await svc.appendMessage('s', Messages.user(step.append), { branch: step.branch });
            else if ('keep' in step)
              await svc.compact('s', () => true, new SlidingWindowCompactionStrategy({ maxEvents: step.keep }));
            else if ('purge' in step) await svc.applyRetention({ maxArchivedEventsPerSession: step.purge }, { batchSize: 2 });
            else if ('foreign' in step)
              await foreign.compact('s', () => true, new SlidingWindowCompactionStrategy({ maxEvents: step.foreign }));
            else await live.retrieve({ sessionId: 's', query: step.search, includeActive: true });
          }
          const fresh = new Bm25Retriever({ sessionService: svc });
          for (const includeActive of [true, false]) {
            const request = { sessionId: 's', query, includeActive, limit: 100 };
            const a = (await live.retrieve(request)).map((h) => [h.event.id, h.event.archived, h.score.toFixed(9)]);
            const b = (await fresh.retrieve(request)).map((h) => [h.event.id, h.event.archived, h.score.toFixed(9)]);
            expect(a).to.deep.equal(b);
          }
          // The positions the live index holds (neighbours of every event) are the log's, as a fresh read gives them.
          const ids = (await svc.getEvents('s')).map((e) => e.id);
          const around = async (r: Bm25Retriever) =>
            (await r.findEventNeighbours('s', ids, 1)).map((run) => run.map((e) => [e.id, e.archived]));
          expect(await around(live)).to.deep.equal(await around(fresh));
          live.close();
          fresh.close();
        }),
        propertyParams(80),
      );
    });
    it('reads the session and its log state together: one round trip where the store pipelines them', async function () {
      await session('s', 'alice', ...chat);
      await retriever.retrieve({ sessionId: 's', query: 'dog', includeActive: true });
      let stateAsked = false;
      let stateAskedBeforeSessionRead = false;
      const findById = service.findById.bind(service);
      const getEventLogState = service.getEventLogState.bind(service);
      service.findById = async (id) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        stateAskedBeforeSessionRead = stateAsked;
        return findById(id);
      };
      service.getEventLogState = async (id) => {
        stateAsked = true;
        return getEventLogState(id);
      };
      expect(texts(await retriever.retrieve({ sessionId: 's', query: 'nurse', includeActive: true }))).to.include(
        'I work as a nurse at the children hospital.',
      );
      // The state was asked for while the session read was still on its way.
      expect(stateAskedBeforeSessionRead).to.equal(true);
    });

    it('property: searches concurrent with appends, compactions and purges leave an index that ranks as one built from scratch', async function () {
      const words = ['apple', 'pear', 'plum', 'fig'];
      const textArb = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 3 }).map((w) => w.join(' '));
      const stepArb = fc.oneof(
        { weight: 4, arbitrary: fc.record({ append: textArb }) },
        { weight: 2, arbitrary: fc.record({ keep: fc.integer({ min: 1, max: 4 }) }) },
        { weight: 4, arbitrary: fc.record({ search: textArb }) },
        { weight: 1, arbitrary: fc.record({ purge: fc.integer({ min: 0, max: 3 }) }) },
      );
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.array(stepArb, { minLength: 1, maxLength: 4 }), { maxLength: 10 }),
          textArb,
          async (batches, query) => {
            const svc = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
            const live = new Bm25Retriever({ sessionService: svc });
            await svc.create({ id: 's', userId: 'u' });
            for (const batch of batches) {
              // Each batch's steps run at once: a search's state read can land before or after the others' writes.
              await Promise.all(
                batch.map(async (step) => {
                  if ('append' in step) await svc.appendMessage('s', Messages.user(step.append));
                  else if ('keep' in step)
                    await svc.compact('s', () => true, new SlidingWindowCompactionStrategy({ maxEvents: step.keep }));
                  else if ('purge' in step)
                    await svc.applyRetention({ maxArchivedEventsPerSession: step.purge }, { batchSize: 2 });
                  else await live.retrieve({ sessionId: 's', query: step.search, includeActive: true });
                }),
              );
            }
            const fresh = new Bm25Retriever({ sessionService: svc });
            const request = { sessionId: 's', query, includeActive: true, limit: 100 };
            const a = (await live.retrieve(request)).map((h) => [h.event.id, h.event.archived, h.score.toFixed(9)]);
            const b = (await fresh.retrieve(request)).map((h) => [h.event.id, h.event.archived, h.score.toFixed(9)]);
            expect(a).to.deep.equal(b);
            live.close();
            fresh.close();
          },
        ),
        propertyParams(150),
      );
    });
  });

  describe('prepare', function () {
    /** Counts the service's session and log-state reads from here on. */
    function countReads() {
      const counts = { findById: 0, getEventLogState: 0 };
      const findById = service.findById.bind(service);
      const getEventLogState = service.getEventLogState.bind(service);
      service.findById = async (id) => {
        counts.findById++;
        return findById(id);
      };
      service.getEventLogState = async (id) => {
        counts.getEventLogState++;
        return getEventLogState(id);
      };
      return counts;
    }

    it('a prepared request reads nothing more and finds what an unprepared one finds', async function () {
      await session('s', 'alice', ...chat);
      const unprepared = texts(await retriever.retrieve({ sessionId: 's', query: 'nurse dog', includeActive: true }));
      const counts = countReads();
      const prepared = retriever.prepare('s');
      expect(counts).to.deep.equal({ findById: 1, getEventLogState: 1 });
      const hits = await retriever.retrieve({ sessionId: 's', query: 'nurse dog', includeActive: true, prepared });
      expect(texts(hits)).to.deep.equal(unprepared);
      expect(counts).to.deep.equal({ findById: 1, getEventLogState: 1 });
    });

    it('a handle serves one request: the next one with it reads again', async function () {
      await session('s', 'alice', ...chat);
      const prepared = retriever.prepare('s');
      await retriever.retrieve({ sessionId: 's', query: 'nurse', includeActive: true, prepared });
      const counts = countReads();
      await retriever.retrieve({ sessionId: 's', query: 'nurse', includeActive: true, prepared });
      expect(counts).to.deep.equal({ findById: 1, getEventLogState: 1 });
    });

    it("a handle for another session, or another retriever's, is ignored: the request reads its own session", async function () {
      await session('a1', 'alice', Messages.user('alice secret: the vault code is 4711'));
      await session('b1', 'bob', Messages.user('bob secret: the vault code is 9999'));
      const forBob = retriever.prepare('b1');
      const hits = await retriever.retrieve({ sessionId: 'a1', query: 'vault code', includeActive: true, prepared: forBob });
      expect(hits.map((h) => h.event.sessionId)).to.deep.equal(['a1']);
      const other = new Bm25Retriever({ sessionService: service });
      const foreign = other.prepare('a1');
      const counts = countReads();
      await retriever.retrieve({ sessionId: 'a1', query: 'vault', includeActive: true, prepared: foreign });
      expect(counts).to.deep.equal({ findById: 1, getEventLogState: 1 });
      // A look-alike object is not a handle either.
      await retriever.retrieve({ sessionId: 'a1', query: 'vault', includeActive: true, prepared: { sessionId: 'a1' } });
      expect(counts).to.deep.equal({ findById: 2, getEventLogState: 2 });
      other.close();
    });

    it("a prepared request still refuses another user's session", async function () {
      await session('b1', 'bob', Messages.user('bob secret: the vault code is 9999'));
      const prepared = retriever.prepare('b1');
      await expectRejects(
        retriever.retrieve({ sessionId: 'b1', userId: 'alice', query: 'vault', includeActive: true, prepared }),
        IllegalStateError,
        "Session 'b1' does not belong to user 'alice'. Access denied.",
      );
    });

    it('a handle never used leaves no unhandled rejection when its reads fail', async function () {
      const failing = new DefaultSessionService(repository, { logger: silent });
      failing.findById = () => Promise.reject(new Error('store down'));
      failing.getEventLogState = () => Promise.reject(new Error('store down'));
      const r = new Bm25Retriever({ sessionService: failing });
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        r.prepare('s');
        await new Promise((resolve) => setTimeout(resolve, 10));
      } finally {
        process.off('unhandledRejection', onUnhandled);
        r.close();
      }
      expect(unhandled).to.deep.equal([]);
    });

    it('rejects a blank session id', function () {
      expect(() => retriever.prepare(' ')).to.throw(InvalidArgumentError, 'sessionId');
    });
  });

  describe('memory bound and concurrency', function () {
    it('keeps at most maxIndexedSessions indexes, dropping the least recently searched', async function () {
      const bounded = new Bm25Retriever({ sessionService: service, maxIndexedSessions: 2 });
      for (const id of ['s1', 's2', 's3']) await session(id, 'alice', Messages.user(`topic ${id}`));
      await bounded.retrieve({ sessionId: 's1', query: 'topic' });
      await bounded.retrieve({ sessionId: 's2', query: 'topic' });
      await bounded.retrieve({ sessionId: 's1', query: 'topic' });
      await bounded.retrieve({ sessionId: 's3', query: 'topic' });
      expect(bounded.indexedSessionIds()).to.deep.equal(['s1', 's3']);
      const reads = service.fullReads();
      expect(await bounded.retrieve({ sessionId: 's2', query: 'topic', includeActive: true })).to.have.length(1);
      expect(service.fullReads()).to.equal(reads + 1);
      expect(bounded.indexedSessionIds()).to.deep.equal(['s3', 's2']);
      bounded.close();
    });

    it('keeps at most maxIndexedEvents events across sessions, dropping the least recently searched (the latest stays, even alone over it)', async function () {
      const bounded = new Bm25Retriever({ sessionService: service, maxIndexedEvents: 5 });
      await session('s1', 'alice', Messages.user('kite one'), Messages.user('kite two'));
      await session('s2', 'alice', Messages.user('kite three'), Messages.user('kite four'));
      await session('s3', 'alice', ...[1, 2, 3, 4, 5, 6].map((i) => Messages.user(`kite ${i}`)));
      await bounded.retrieve({ sessionId: 's1', query: 'kite' });
      await bounded.retrieve({ sessionId: 's2', query: 'kite' });
      expect(bounded.indexedSessionIds()).to.deep.equal(['s1', 's2']);
      expect(bounded.indexedEventCount()).to.equal(4);
      await service.appendMessage('s1', Messages.user('kite five'));
      await bounded.retrieve({ sessionId: 's1', query: 'kite' });
      expect(bounded.indexedSessionIds()).to.deep.equal(['s2', 's1']);
      await service.appendMessage('s1', Messages.user('kite six'));
      await bounded.retrieve({ sessionId: 's1', query: 'kite' });
      expect(bounded.indexedSessionIds()).to.deep.equal(['s1']);
      expect(bounded.indexedEventCount()).to.equal(4);
      await bounded.retrieve({ sessionId: 's3', query: 'kite' });
      expect(bounded.indexedSessionIds()).to.deep.equal(['s3']);
      expect(bounded.indexedEventCount()).to.equal(6);
      bounded.close();
    });

    it("scope 'user' over more sessions than the bound still holds the bound", async function () {
      const bounded = new Bm25Retriever({ sessionService: service, maxIndexedSessions: 2 });
      for (let i = 0; i < 5; i++) await session(`s${i}`, 'alice', Messages.user(`kite number ${i}`));
      const hits = await bounded.retrieve({
        sessionId: 's0',
        userId: 'alice',
        scope: 'user',
        query: 'kite',
        includeActive: true,
      });
      expect(hits).to.have.length(5);
      expect(bounded.indexedSessionIds()).to.have.length(2);
      bounded.close();
    });

    it('builds the index of a cold session once, however many searches arrive together', async function () {
      await session('s', 'alice', ...chat);
      const results = await Promise.all(
        Array.from({ length: 8 }, () => retriever.retrieve({ sessionId: 's', query: 'dog', includeActive: true })),
      );
      expect(service.fullReads()).to.equal(1);
      for (const hits of results) expect(texts(hits)).to.deep.equal(texts(results[0]!));
    });

    it('concurrent searches and appends never index an event twice', async function () {
      await session('s', 'alice', Messages.user('start'));
      const work: Promise<unknown>[] = [];
      for (let i = 0; i < 20; i++) {
        work.push(service.appendMessage('s', Messages.user(`walrus ${i}`)));
        work.push(retriever.retrieve({ sessionId: 's', query: 'walrus', includeActive: true, limit: 100 }));
      }
      await Promise.all(work);
      const hits = await retriever.retrieve({ sessionId: 's', query: 'walrus', includeActive: true, limit: 100 });
      expect(hits.filter((h) => h.event.text!.startsWith('walrus'))).to.have.length(20);
      expect(new Set(hits.map((h) => h.event.id)).size).to.equal(hits.length);
    });
  });
});
