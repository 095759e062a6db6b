/**
 * The SessionRepository contract (docs/repository-spi.md) as one
 * reusable suite. Every backend runs it: `repositoryContract('SQLite', async () => new SqliteSessionRepository(...))`.
 * The factory is called once per test and must return an empty repository (or one using a fresh prefix).
 */
import { expect } from 'chai';
import { rewriteContract } from './rewriteContract.js';
import {
  EventFilter,
  InvalidArgumentError,
  Messages,
  Session,
  SessionEvent,
  type Message,
  type SessionRepository,
} from 'session-compaction';
import { isAtomicInsertRepository, isBatchAppendRepository, isEventLogStateRepository } from 'session-compaction/spi';
import { fidelityContract } from './fidelityContract.js';

export interface ContractOptions {
  /** Called after each test with the repository the factory returned. */
  teardown?: (repo: SessionRepository) => Promise<void>;
}

let counter = 0;
const uid = (p: string) => `${p}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

export function repositoryContract(name: string, factory: () => Promise<SessionRepository>, options: ContractOptions = {}): void {
  describe(`SessionRepository contract: ${name}`, function () {
    let repo: SessionRepository;

    beforeEach(async function () {
      repo = await factory();
    });
    afterEach(async function () {
      if (repo !== undefined) {
        if (options.teardown) await options.teardown(repo);
        else await repo.close?.();
      }
    });

    async function newSession(userId = 'user-1', init: Partial<Parameters<typeof Session.create>[0]> = {}): Promise<Session> {
      return repo.save(Session.create({ id: uid('s'), userId, ...init }));
    }
    function ev(
      sessionId: string,
      message: Message,
      init: Partial<Parameters<typeof SessionEvent.create>[0]> = {},
    ): SessionEvent {
      return SessionEvent.create({ sessionId, id: uid('e'), message, ...init });
    }
    async function append(sessionId: string, ...texts: string[]): Promise<SessionEvent[]> {
      const out: SessionEvent[] = [];
      for (const t of texts) {
        const e = ev(sessionId, Messages.user(t));
        await repo.appendEvent(e);
        out.push(e);
      }
      return out;
    }
    const textsOf = async (id: string, f?: EventFilter) => (await repo.findEvents(id, f)).map((e) => e.text);

    rewriteContract(() => repo);
    fidelityContract(() => repo);

    describe('sessions', function () {
      it('save then findById returns the same id and userId; an unknown id gives null', async function () {
        const s = await newSession('alice');
        const found = await repo.findById(s.id);
        expect(found?.id).to.equal(s.id);
        expect(found?.userId).to.equal('alice');
        expect(await repo.findById(uid('missing'))).to.equal(null);
      });

      it('round-trips createdAt, expiresAt and metadata; a null expiresAt stays null', async function () {
        const createdAt = new Date('2025-01-02T03:04:05.678Z');
        const expiresAt = new Date('2025-03-02T03:04:05.678Z');
        const s = await newSession('u', { createdAt, expiresAt, metadata: { a: 1, nested: { b: ['x', "q'uote"] } } });
        const found = (await repo.findById(s.id))!;
        expect(found.createdAt.getTime()).to.equal(createdAt.getTime());
        expect(found.expiresAt?.getTime()).to.equal(expiresAt.getTime());
        expect(found.metadata).to.deep.equal({ a: 1, nested: { b: ['x', "q'uote"] } });
        const n = await newSession('u', { expiresAt: null });
        expect((await repo.findById(n.id))!.expiresAt).to.equal(null);
      });

      it('save is an upsert that keeps the event log and the version', async function () {
        const s = await newSession();
        await append(s.id, 'one', 'two');
        await repo.save(s.with({ metadata: { title: 'renamed' } }));
        expect(await repo.getEventVersion(s.id)).to.equal(2);
        expect(await textsOf(s.id)).to.deep.equal(['one', 'two']);
        expect((await repo.findById(s.id))!.metadata).to.deep.equal({ title: 'renamed' });
      });

      it('saveIfAbsent inserts a new session once and never overwrites an existing one', async function () {
        if (!isAtomicInsertRepository(repo)) this.skip();
        const id = uid('s');
        expect(await repo.saveIfAbsent(Session.create({ id, userId: 'owner' }))).to.equal(true);
        await repo.appendEvent(ev(id, Messages.user('mine')));
        expect(await repo.saveIfAbsent(Session.create({ id, userId: 'intruder' }))).to.equal(false);
        expect((await repo.findById(id))!.userId).to.equal('owner');
        expect(await repo.findByUserId('intruder')).to.deep.equal([]);
        expect(await textsOf(id)).to.deep.equal(['mine']);
        expect(await repo.getEventVersion(id)).to.equal(1);
      });

      it('concurrent saveIfAbsent calls for one id: exactly one wins', async function () {
        const inserting = repo;
        if (!isAtomicInsertRepository(inserting)) this.skip();
        const id = uid('s');
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) => inserting.saveIfAbsent(Session.create({ id, userId: `user-${i}` }))),
        );
        expect(results.filter((r) => r)).to.have.length(1);
        const winner = `user-${results.indexOf(true)}`;
        expect((await repo.findById(id))!.userId).to.equal(winner);
      });

      it('findByUserId returns only that user’s sessions', async function () {
        const alice = uid('alice');
        const bob = uid('bob');
        const a1 = await newSession(alice);
        const a2 = await newSession(alice);
        await newSession(bob);
        const found = (await repo.findByUserId(alice)).map((s) => s.id).sort();
        expect(found).to.deep.equal([a1.id, a2.id].sort());
        expect(await repo.findByUserId(uid('nobody'))).to.deep.equal([]);
      });

      it('findExpiredSessionIds returns only sessions that expired strictly before the instant', async function () {
        const now = new Date();
        const expired = await newSession('u', { expiresAt: new Date(now.getTime() - 60_000) });
        const live = await newSession('u');
        const never = await newSession('u', { expiresAt: null });
        const ids = await repo.findExpiredSessionIds(now);
        expect(ids).to.include(expired.id);
        expect(ids).to.not.include(live.id);
        expect(ids).to.not.include(never.id);
        const edge = await newSession('u', { expiresAt: new Date(now.getTime() + 1000) });
        expect(await repo.findExpiredSessionIds(new Date(now.getTime() + 1000))).to.not.include(edge.id);
      });

      it('delete removes the session and its events', async function () {
        const s = await newSession();
        await append(s.id, 'a', 'b');
        await repo.delete(s.id);
        expect(await repo.findById(s.id)).to.equal(null);
        expect(await repo.findEvents(s.id)).to.deep.equal([]);
        expect(await repo.getEventVersion(s.id)).to.equal(0);
      });
    });

    describe('append and version', function () {
      it('appendEvent to an unknown session throws InvalidArgumentError "Session not found: <id>"', async function () {
        const id = uid('missing');
        let error: unknown;
        try {
          await repo.appendEvent(ev(id, Messages.user('x')));
        } catch (e) {
          error = e;
        }
        expect(error).to.be.instanceOf(InvalidArgumentError);
        expect((error as Error).message).to.include(`Session not found: ${id}`);
      });

      it('version is 0 after save, +1 per new append, and 0 for an unknown session', async function () {
        const s = await newSession();
        expect(await repo.getEventVersion(s.id)).to.equal(0);
        await append(s.id, 'a');
        expect(await repo.getEventVersion(s.id)).to.equal(1);
        await append(s.id, 'b');
        expect(await repo.getEventVersion(s.id)).to.equal(2);
        expect(await repo.getEventVersion(uid('missing'))).to.equal(0);
      });

      it('appending the same event id twice stores one event and does not bump the version', async function () {
        const s = await newSession();
        const e = ev(s.id, Messages.user('once'));
        await repo.appendEvent(e);
        const v = await repo.getEventVersion(s.id);
        await repo.appendEvent(e);
        await repo.appendEvent(SessionEvent.create({ sessionId: s.id, id: e.id, message: Messages.user('replayed') }));
        expect(await textsOf(s.id)).to.deep.equal(['once']);
        expect(await repo.getEventVersion(s.id)).to.equal(v);
      });

      it('the same event id in two sessions is two events', async function () {
        const s1 = await newSession();
        const s2 = await newSession();
        const id = uid('shared');
        await repo.appendEvent(SessionEvent.create({ sessionId: s1.id, id, message: Messages.user('in s1') }));
        await repo.appendEvent(SessionEvent.create({ sessionId: s2.id, id, message: Messages.user('in s2') }));
        expect(await textsOf(s1.id)).to.deep.equal(['in s1']);
        expect(await textsOf(s2.id)).to.deep.equal(['in s2']);
        expect(await repo.getEventVersion(s2.id)).to.equal(1);
      });

      it('events with different ids are both stored, in insertion order even when timestamps go backwards', async function () {
        const s = await newSession();
        const late = ev(s.id, Messages.user('first appended'), { timestamp: new Date('2030-01-01T00:00:00Z') });
        const early = ev(s.id, Messages.user('second appended'), { timestamp: new Date('2020-01-01T00:00:00Z') });
        await repo.appendEvent(late);
        await repo.appendEvent(early);
        expect(await textsOf(s.id)).to.deep.equal(['first appended', 'second appended']);
      });

      it('round-trips every message kind with its tool calls, responses, reasoning, metadata and branch', async function () {
        const s = await newSession();
        const events = [
          ev(s.id, Messages.system('be brief')),
          ev(s.id, Messages.user("naïve “quotes” 'single' %_ \\ 日本 🎉"), { metadata: { k: 'v', n: 2 } }),
          ev(s.id, Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'get_weather', '{"location":"Paris"}')] })),
          ev(
            s.id,
            Messages.tool([
              Messages.toolResponse('c1', 'get_weather', '{"temp":"22C"}'),
              Messages.toolResponse('c2', 'other', ''),
            ]),
          ),
          ev(s.id, Messages.assistant('answer', { reasoning: 'because' }), { branch: 'orch.researcher' }),
          ev(s.id, Messages.assistant('summary'), { metadata: { synthetic: true, compactionSource: 'x' } }),
        ];
        for (const e of events) await repo.appendEvent(e);
        const back = await repo.findEvents(s.id);
        expect(back.map((e) => e.id)).to.deep.equal(events.map((e) => e.id));
        for (let i = 0; i < events.length; i++) {
          expect(back[i]!.message).to.deep.equal(events[i]!.message);
          expect(back[i]!.metadata).to.deep.equal(events[i]!.metadata);
          expect(back[i]!.branch).to.equal(events[i]!.branch);
          expect(back[i]!.timestamp.getTime()).to.equal(events[i]!.timestamp.getTime());
          expect(back[i]!.sessionId).to.equal(s.id);
          expect(back[i]!.archived).to.equal(false);
        }
        expect(back[5]!.isSynthetic()).to.equal(true);
      });

      it("round-trips the participant's name of user and assistant messages, and leaves it off where none was given", async function () {
        const s = await newSession();
        const events = [
          ev(s.id, Messages.user('I researched adoption agencies.', { name: 'Caroline' })),
          ev(s.id, Messages.assistant('That sounds like a big step!', { name: 'Melanie' })),
          ev(
            s.id,
            Messages.assistant(null, {
              name: 'José_Ñúñez-2',
              reasoning: 'look it up',
              toolCalls: [Messages.toolCall('c1', 'search', '{"q":"agencies"}')],
            }),
          ),
          ev(s.id, Messages.tool([Messages.toolResponse('c1', 'search', 'three agencies')])),
          ev(s.id, Messages.user('no name here')),
          ev(s.id, Messages.user('', { name: 'Ann Lee 😀' })),
        ];
        for (const e of events) await repo.appendEvent(e);
        const back = await repo.findEvents(s.id);
        expect(back.map((e) => e.message)).to.deep.equal(events.map((e) => e.message));
        expect(back.map((e) => ('name' in e.message ? e.message.name : undefined))).to.deep.equal([
          'Caroline',
          'Melanie',
          'José_Ñúñez-2',
          undefined,
          undefined,
          'Ann Lee 😀',
        ]);
        expect(Object.keys(back[4]!.message)).to.deep.equal(['type', 'text']);
        // The name is not the text: the text filters (containsText) match what was written, not who wrote it.
        expect(back.map((e) => e.text)).to.deep.equal(events.map((e) => e.text));
      });

      it('stores a 1 MB text intact', async function () {
        const s = await newSession();
        const big = 'x'.repeat(1024 * 1024 - 5) + '%_end';
        await repo.appendEvent(ev(s.id, Messages.user(big)));
        const [back] = await repo.findEvents(s.id);
        expect(back!.text).to.equal(big);
      });

      it('concurrent appends to one session all land, each bumping the version once', async function () {
        const s = await newSession();
        const events = Array.from({ length: 40 }, (_, i) => ev(s.id, Messages.user(`c${i}`)));
        await Promise.all(events.map((e) => repo.appendEvent(e)));
        await Promise.all(events.slice(0, 10).map((e) => repo.appendEvent(e)));
        const ids = (await repo.findEvents(s.id)).map((e) => e.id).sort();
        expect(ids).to.deep.equal(events.map((e) => e.id).sort());
        expect(await repo.getEventVersion(s.id)).to.equal(40);
      });
    });

    describe('compactEvents (CAS)', function () {
      it('archives, retains and bumps the version by one', async function () {
        const s = await newSession();
        const [e1, e2] = await append(s.id, 'msg-1', 'msg-2');
        const v = await repo.getEventVersion(s.id);
        const summary = ev(s.id, Messages.assistant('summary'), { metadata: { synthetic: true } });
        expect(await repo.compactEvents(s.id, [e1!], [summary, e2!], v)).to.equal(true);
        expect(await repo.getEventVersion(s.id)).to.equal(v + 1);
        expect(await textsOf(s.id, EventFilter.active())).to.deep.equal(['summary', 'msg-2']);
        const all = await repo.findEvents(s.id, EventFilter.all());
        expect(all.map((e) => e.text)).to.deep.equal(['msg-1', 'summary', 'msg-2']);
        expect(all.map((e) => e.archived)).to.deep.equal([true, false, false]);
      });

      it('a stale version changes nothing and returns false', async function () {
        const s = await newSession();
        const [e1] = await append(s.id, 'msg-1');
        const v = await repo.getEventVersion(s.id);
        const ok = await repo.compactEvents(s.id, [e1!], [ev(s.id, Messages.user('should-not-land'))], v - 1);
        expect(ok).to.equal(false);
        const all = await repo.findEvents(s.id);
        expect(all.map((e) => [e.text, e.archived])).to.deep.equal([['msg-1', false]]);
        expect(await repo.getEventVersion(s.id)).to.equal(v);
      });

      it('two passes keep archived history in order and hard-delete the superseded summary', async function () {
        const s = await newSession();
        const [e1, e2, e3] = await append(s.id, 'e1', 'e2', 'e3');
        const s1 = ev(s.id, Messages.assistant('s1'), { metadata: { synthetic: true } });
        expect(await repo.compactEvents(s.id, [e1!], [s1, e2!, e3!], await repo.getEventVersion(s.id))).to.equal(true);
        const s2 = ev(s.id, Messages.assistant('s2'), { metadata: { synthetic: true } });
        expect(await repo.compactEvents(s.id, [e2!], [s2, e3!], await repo.getEventVersion(s.id))).to.equal(true);
        expect(await textsOf(s.id)).to.deep.equal(['e1', 'e2', 's2', 'e3']);
        expect(await textsOf(s.id, EventFilter.active())).to.deep.equal(['s2', 'e3']);
      });

      it('a compaction with nothing archived still bumps the version', async function () {
        const s = await newSession();
        const [e1] = await append(s.id, 'only');
        const v = await repo.getEventVersion(s.id);
        expect(await repo.compactEvents(s.id, [], [e1!], v)).to.equal(true);
        expect(await repo.getEventVersion(s.id)).to.equal(v + 1);
        expect(await textsOf(s.id, EventFilter.active())).to.deep.equal(['only']);
      });

      it('compactEvents on an unknown session throws "Session not found"', async function () {
        let error: unknown;
        try {
          await repo.compactEvents(uid('missing'), [], [], 0);
        } catch (e) {
          error = e;
        }
        expect(error).to.be.instanceOf(InvalidArgumentError);
        expect((error as Error).message).to.include('Session not found');
      });

      it('an id removed as superseded can be appended again, and an append after compaction lands last', async function () {
        const s = await newSession();
        const [e1, e2] = await append(s.id, 'a', 'b');
        const sum = ev(s.id, Messages.assistant('sum'), { metadata: { synthetic: true } });
        await repo.compactEvents(s.id, [e1!], [sum, e2!], await repo.getEventVersion(s.id));
        await repo.compactEvents(s.id, [], [e2!], await repo.getEventVersion(s.id));
        await repo.appendEvent(sum);
        await append(s.id, 'c');
        expect(await textsOf(s.id)).to.deep.equal(['a', 'b', 'sum', 'c']);
      });

      it('getEventLogState reports the version; appends, replays and compactions leave the purge generation at 0', async function () {
        if (!isEventLogStateRepository(repo)) this.skip();
        const state = (version: number) => ({ version, purgeGeneration: 0 });
        expect(await repo.getEventLogState(uid('missing'))).to.deep.equal(state(0));
        const s = await newSession();
        expect(await repo.getEventLogState(s.id)).to.deep.equal(state(0));
        const [e1, e2] = await append(s.id, 'a', 'b');
        await repo.appendEvent(e1!);
        expect(await repo.getEventLogState(s.id)).to.deep.equal(state(2));
        const sum = ev(s.id, Messages.assistant('sum'), { metadata: { synthetic: true } });
        await repo.compactEvents(s.id, [e1!], [sum, e2!], 2);
        expect(await repo.getEventLogState(s.id)).to.deep.equal(state(3));
        // The superseded summary leaves the log: that removal is a compaction's, with its version step.
        await repo.compactEvents(s.id, [], [e2!], 3);
        expect(await repo.getEventLogState(s.id)).to.deep.equal(state(4));
        await repo.appendEvent(ev(s.id, Messages.user('late'), { archived: true }));
        expect(await repo.getEventLogState(s.id)).to.deep.equal(state(5));
        if (isBatchAppendRepository(repo)) {
          await repo.appendEvents(s.id, [ev(s.id, Messages.user('x')), ev(s.id, Messages.user('y'))]);
          expect(await repo.getEventLogState(s.id)).to.deep.equal(state(7));
        }
      });

      it('a compaction of one session leaves another session untouched', async function () {
        const s1 = await newSession();
        const s2 = await newSession();
        const [a1] = await append(s1.id, 'a1', 'a2');
        await append(s2.id, 'b1', 'b2');
        await repo.compactEvents(s1.id, [a1!], [], await repo.getEventVersion(s1.id));
        expect(await textsOf(s2.id, EventFilter.active())).to.deep.equal(['b1', 'b2']);
      });
    });

    describe('findEvents filters', function () {
      it('returns [] for an unknown session', async function () {
        expect(await repo.findEvents(uid('missing'), EventFilter.all())).to.deep.equal([]);
      });

      it('lastN keeps the newest N in log order', async function () {
        const s = await newSession();
        await append(s.id, 'msg-1', 'msg-2', 'msg-3', 'msg-4', 'msg-5');
        expect(await textsOf(s.id, EventFilter.lastN(2))).to.deep.equal(['msg-4', 'msg-5']);
        expect(await textsOf(s.id, EventFilter.lastN(9))).to.have.length(5);
      });

      it('pages of the whole log and of the window are slices of the log, across the archive/window boundary', async function () {
        const s = await newSession();
        const events = await append(s.id, 'p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6');
        const window = await repo.findEvents(s.id, EventFilter.active());
        await repo.compactEvents(s.id, events.slice(0, 3), window.slice(3), await repo.getEventVersion(s.id));
        const texts = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
        for (const pageSize of [1, 2, 3, 5, 8]) {
          for (let page = 0; page * pageSize <= texts.length; page++) {
            expect(await textsOf(s.id, EventFilter.of({ page, pageSize }))).to.deep.equal(
              texts.slice(page * pageSize, (page + 1) * pageSize),
            );
            expect(await textsOf(s.id, EventFilter.of({ page, pageSize, excludeArchived: true }))).to.deep.equal(
              texts.slice(3).slice(page * pageSize, (page + 1) * pageSize),
            );
          }
        }
      });

      it('lastN keeps the newest N matches in log order, across the archive/window boundary', async function () {
        const s = await newSession();
        const events = await append(s.id, 'n0', 'n1', 'n2', 'n3', 'n4', 'n5');
        const window = await repo.findEvents(s.id, EventFilter.active());
        await repo.compactEvents(s.id, events.slice(0, 4), window.slice(4), await repo.getEventVersion(s.id));
        expect(await textsOf(s.id, EventFilter.lastN(4))).to.deep.equal(['n2', 'n3', 'n4', 'n5']);
        expect(await textsOf(s.id, EventFilter.of({ lastN: 2, pattern: /n[0-3]/ }))).to.deep.equal(['n2', 'n3']);
        expect(await textsOf(s.id, EventFilter.of({ lastN: 4, excludeArchived: true }))).to.deep.equal(['n4', 'n5']);
      });

      it('realOnly drops synthetic events; active drops archived ones', async function () {
        const s = await newSession();
        const [real] = await append(s.id, 'real');
        await repo.appendEvent(ev(s.id, Messages.user('shadow'), { metadata: { synthetic: true } }));
        await repo.appendEvent(ev(s.id, Messages.assistant('sum'), { metadata: { synthetic: true } }));
        expect(await textsOf(s.id, EventFilter.realOnly())).to.deep.equal(['real']);
        const active = await repo.findEvents(s.id, EventFilter.active());
        await repo.compactEvents(s.id, [real!], active.slice(1), await repo.getEventVersion(s.id));
        expect(await textsOf(s.id, EventFilter.active())).to.deep.equal(['shadow', 'sum']);
        expect(await textsOf(s.id, EventFilter.of({ excludeArchived: true, excludeSynthetic: true }))).to.deep.equal([]);
      });

      it('pages count from the oldest match; a page past the end is empty', async function () {
        const s = await newSession();
        await append(s.id, ...Array.from({ length: 7 }, (_, i) => `spring message ${i + 1}`), 'other');
        const page = (p: number) => textsOf(s.id, EventFilter.keywordSearch('spring', p, 3));
        expect(await page(0)).to.deep.equal(['spring message 1', 'spring message 2', 'spring message 3']);
        expect(await page(1)).to.deep.equal(['spring message 4', 'spring message 5', 'spring message 6']);
        expect(await page(2)).to.deep.equal(['spring message 7']);
        expect(await textsOf(s.id, EventFilter.keywordSearch('spring', 5, 10))).to.deep.equal([]);
      });

      it('keyword search is a case-insensitive substring match; % and _ are literals', async function () {
        const s = await newSession();
        await append(
          s.id,
          'Spring AI is a great framework',
          'Quarkus too',
          'Spring Boot is also useful',
          '100% sure',
          'a_b',
          'ab',
          'axb',
        );
        await repo.appendEvent(ev(s.id, Messages.assistant(null, { toolCalls: [Messages.toolCall('c', 'spring', '{}')] })));
        expect(await textsOf(s.id, EventFilter.of({ keyword: 'SPRING' }))).to.deep.equal([
          'Spring AI is a great framework',
          'Spring Boot is also useful',
        ]);
        expect(await textsOf(s.id, EventFilter.of({ keyword: '%' }))).to.deep.equal(['100% sure']);
        expect(await textsOf(s.id, EventFilter.of({ keyword: '_' }))).to.deep.equal(['a_b']);
        expect(await textsOf(s.id, EventFilter.of({ keyword: 'a_b' }))).to.deep.equal(['a_b']);
        expect(await textsOf(s.id, EventFilter.of({ keyword: '\\' }))).to.deep.equal([]);
      });

      it('keywords match any or all terms', async function () {
        const s = await newSession();
        await append(s.id, 'I meant instead of that', 'no relation here', 'actually, use this instead', "actually, that's fine");
        expect(await textsOf(s.id, EventFilter.of({ keywords: ['actually', 'instead'], matchMode: 'any' }))).to.have.length(3);
        expect(await textsOf(s.id, EventFilter.of({ keywords: ['actually', 'instead'], matchMode: 'all' }))).to.deep.equal([
          'actually, use this instead',
        ]);
      });

      it('a pattern is applied before lastN and paging', async function () {
        const s = await newSession();
        await append(
          s.id,
          'we decided on option A',
          'noise',
          'we decided on option B',
          'noise 2',
          'we decided nothing',
          'option C',
        );
        expect(await textsOf(s.id, EventFilter.of({ pattern: /option [A-Z]/, lastN: 2 }))).to.deep.equal([
          'we decided on option B',
          'option C',
        ]);
        expect(
          await textsOf(s.id, EventFilter.of({ keyword: 'decided', pattern: /option [A-Z]/, page: 1, pageSize: 1 })),
        ).to.deep.equal(['we decided on option B']);
      });

      it('filters by message type and by an inclusive time range', async function () {
        const s = await newSession();
        const t = (iso: string) => new Date(iso);
        await repo.appendEvent(ev(s.id, Messages.user('u1'), { timestamp: t('2025-01-01T00:00:00Z') }));
        await repo.appendEvent(ev(s.id, Messages.assistant('a1'), { timestamp: t('2025-01-02T00:00:00Z') }));
        await repo.appendEvent(ev(s.id, Messages.system('s1'), { timestamp: t('2025-01-03T00:00:00Z') }));
        await repo.appendEvent(ev(s.id, Messages.user('u2'), { timestamp: t('2025-01-04T00:00:00Z') }));
        expect(await textsOf(s.id, EventFilter.of({ messageTypes: ['user', 'system'] }))).to.deep.equal(['u1', 's1', 'u2']);
        expect(
          await textsOf(s.id, EventFilter.of({ from: t('2025-01-02T00:00:00Z'), to: t('2025-01-03T00:00:00Z') })),
        ).to.deep.equal(['a1', 's1']);
      });

      it('branch visibility: root, own branch and ancestors; not siblings, children or look-alike prefixes', async function () {
        const s = await newSession();
        for (const b of [
          null,
          'orch',
          'orch.researcher',
          'orch.writer',
          'orch.researcher.summarizer',
          'orchestra',
          'or_h',
          'o%',
        ]) {
          await repo.appendEvent(ev(s.id, Messages.user(`at ${b ?? 'root'}`), { branch: b }));
        }
        expect(await textsOf(s.id, EventFilter.forBranch('orch.researcher'))).to.deep.equal([
          'at root',
          'at orch',
          'at orch.researcher',
        ]);
        expect(await textsOf(s.id, EventFilter.forBranch('orchestra.researcher'))).to.deep.equal(['at root', 'at orchestra']);
        expect(await textsOf(s.id, EventFilter.forBranch('orch.x'))).to.deep.equal(['at root', 'at orch']);
        expect(await textsOf(s.id, EventFilter.all())).to.have.length(8);
      });

      it('merged filters combine every criterion (AND)', async function () {
        const s = await newSession();
        await append(s.id, 'alpha one', 'beta one', 'alpha two');
        await repo.appendEvent(ev(s.id, Messages.assistant('alpha three')));
        await repo.appendEvent(ev(s.id, Messages.user('alpha synthetic'), { metadata: { synthetic: true } }));
        const f = EventFilter.of({ keyword: 'alpha', messageTypes: ['user'] })
          .merge(EventFilter.realOnly())
          .merge(EventFilter.lastN(1));
        expect(await textsOf(s.id, f)).to.deep.equal(['alpha two']);
      });
    });
  });
}
