import { expect } from 'chai';
import {
  CompactionResult,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  SessionEvent,
  SlidingWindowCompactionStrategy,
  type CompactionRequest,
  type CompactionStrategy,
  type SessionRepository,
} from 'session-compaction';
import { CharEstimator, expectRejects, texts } from '../support/fixtures.js';

const DAY = 24 * 60 * 60 * 1000;
const silent = { error() {}, warn() {}, info() {}, debug() {} };
const sliding = (maxEvents: number) =>
  new SlidingWindowCompactionStrategy({ maxEvents, tokenCountEstimator: new CharEstimator() });

/** A promise both racers wait on; it opens once `parties` of them have arrived. */
function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  return () => {
    arrived += 1;
    if (arrived === parties) open();
    return gate;
  };
}

describe('DefaultSessionService over InMemorySessionRepository', function () {
  let repo: InMemorySessionRepository;
  let service: DefaultSessionService;

  beforeEach(function () {
    repo = new InMemorySessionRepository();
    service = new DefaultSessionService(repo, { logger: silent });
  });

  async function sessionWith(...messages: string[]): Promise<string> {
    const { id } = await service.create({ userId: 'user-1' });
    for (const m of messages) await service.appendMessage(id, Messages.user(m));
    return id;
  }
  const msgTexts = (n: number) => Array.from({ length: n }, (_, i) => `msg-${i + 1}`);

  it('83: create gives a non-blank id, the user id and an empty log', async function () {
    const s = await service.create({ userId: 'user-1' });
    expect(s.id.trim()).to.not.equal('');
    expect(s.userId).to.equal('user-1');
    expect(await service.getEvents(s.id)).to.deep.equal([]);
  });

  it('83: create uses a given id, and a blank id means a random one', async function () {
    expect((await service.create({ userId: 'u', id: 'chosen' })).id).to.equal('chosen');
    const a = await service.create({ userId: 'u', id: '   ' });
    const b = await service.create({ userId: 'u' });
    expect(a.id.trim()).to.not.equal('');
    expect(a.id).to.not.equal(b.id);
  });

  it('84: the default time to live is 60 days (±5 s)', async function () {
    const s = await service.create({ userId: 'u' });
    expect(s.expiresAt).to.be.instanceOf(Date);
    expect(Math.abs(s.expiresAt!.getTime() - (Date.now() + 60 * DAY))).to.be.lessThan(5000);
    expect(service.defaultTimeToLiveMs).to.equal(60 * DAY);
  });

  it('84: the service option defaultTimeToLiveMs sets the TTL (2 h)', async function () {
    const twoHours = new DefaultSessionService(repo, { defaultTimeToLiveMs: 2 * 60 * 60 * 1000, logger: silent });
    const s = await twoHours.create({ userId: 'u' });
    expect(Math.abs(s.expiresAt!.getTime() - (Date.now() + 2 * 60 * 60 * 1000))).to.be.lessThan(5000);
  });

  it('84: a per-request timeToLiveMs wins over the default (30 min < 1 h)', async function () {
    const s = await service.create({ userId: 'u', timeToLiveMs: 30 * 60 * 1000 });
    expect(s.expiresAt!.getTime()).to.be.lessThan(Date.now() + 60 * 60 * 1000);
    expect(Math.abs(s.expiresAt!.getTime() - (s.createdAt.getTime() + 30 * 60 * 1000))).to.equal(0);
  });

  it('84: a negative per-request TTL creates an already expired session', async function () {
    const s = await service.create({ userId: 'u', timeToLiveMs: -1000 });
    expect(s.expiresAt!.getTime()).to.be.lessThan(Date.now());
    expect(await service.deleteExpiredSessions(new Date())).to.equal(1);
  });

  it('84: a non-positive default TTL is rejected', function () {
    expect(() => new DefaultSessionService(repo, { defaultTimeToLiveMs: 0 })).to.throw(
      InvalidArgumentError,
      'defaultTimeToLiveMs',
    );
    expect(() => new DefaultSessionService(repo, { defaultTimeToLiveMs: -5 })).to.throw(
      InvalidArgumentError,
      'defaultTimeToLiveMs',
    );
  });

  it('84: createdAt and the TTL follow the injected clock', async function () {
    const now = new Date('2030-01-01T00:00:00Z');
    const clocked = new DefaultSessionService(repo, { now: () => now, logger: silent });
    const s = await clocked.create({ userId: 'u' });
    expect(s.createdAt.getTime()).to.equal(now.getTime());
    expect(s.expiresAt!.getTime()).to.equal(now.getTime() + 60 * DAY);
  });

  it('85: appendMessage then getMessages returns the message; several keep their order', async function () {
    const one = await sessionWith('hello');
    expect((await service.getMessages(one)).map((m) => (m.type === 'user' ? m.text : null))).to.deep.equal(['hello']);
    const three = await sessionWith('first', 'second', 'third');
    expect(texts(await service.getEvents(three))).to.deep.equal(['first', 'second', 'third']);
  });

  it('85: appendMessage returns the stored event with the given branch, metadata and id', async function () {
    const id = await sessionWith();
    const e = await service.appendMessage(id, Messages.assistant('x'), { branch: 'orch', metadata: { k: 1 }, id: 'ev-1' });
    expect(e.id).to.equal('ev-1');
    expect(e.branch).to.equal('orch');
    expect(e.metadata).to.deep.equal({ k: 1 });
    expect((await service.getEvents(id))[0]!.equals(e)).to.equal(true);
  });

  it('86: delete makes findById return null', async function () {
    const id = await sessionWith('x');
    await service.delete(id);
    expect(await service.findById(id)).to.equal(null);
    expect(await service.getEvents(id)).to.deep.equal([]);
  });

  it('86: findByUserId returns each user’s sessions', async function () {
    await service.create({ userId: 'alice' });
    await service.create({ userId: 'alice' });
    await service.create({ userId: 'bob' });
    expect(await service.findByUserId('alice')).to.have.length(2);
    expect(await service.findByUserId('bob')).to.have.length(1);
    expect(await service.findByUserId('carol')).to.have.length(0);
  });

  it('87: compacting msg-1..5 with Sliding(2) archives 3; the active view is msg-4, msg-5; the full view keeps all', async function () {
    const id = await sessionWith(...msgTexts(5));
    const r = await service.compact(id, () => true, sliding(2));
    expect(r.eventsRemoved).to.equal(3);
    expect(r.compactedEvents).to.have.length(2);
    expect(texts(await service.getEvents(id, EventFilter.active()))).to.deep.equal(['msg-4', 'msg-5']);
    const all = await service.getEvents(id);
    expect(texts(all)).to.deep.equal(msgTexts(5));
    expect(texts(all.filter((e) => e.isArchived()))).to.deep.equal(['msg-1', 'msg-2', 'msg-3']);
  });

  it('88: an archived secret leaves the active view but keyword search over the full log still finds it', async function () {
    const id = await sessionWith('the secret code is alpha-7', ...Array.from({ length: 5 }, (_, i) => `filler-${i + 1}`));
    await service.compact(id, () => true, sliding(2));
    const active = await service.getEvents(id, EventFilter.active());
    expect(active.some((e) => e.text?.includes('alpha-7'))).to.equal(false);
    const found = await service.getEvents(id, EventFilter.keywordSearch('alpha-7'));
    expect(found).to.have.length(1);
    expect(found[0]!.text).to.equal('the secret code is alpha-7');
    expect(found[0]!.isArchived()).to.equal(true);
  });

  it('89: trigger false archives nothing and writes nothing (version unchanged)', async function () {
    const id = await sessionWith('only');
    const before = await repo.getEventVersion(id);
    let strategyCalled = false;
    const r = await service.compact(
      id,
      () => false,
      async (req) => {
        strategyCalled = true;
        return CompactionResult.noop(req.events);
      },
    );
    expect(r.archivedEvents).to.deep.equal([]);
    expect(r.eventsRemoved).to.equal(0);
    expect(texts(r.compactedEvents)).to.deep.equal(['only']);
    expect(strategyCalled).to.equal(false);
    expect(await service.getEvents(id)).to.have.length(1);
    expect(await repo.getEventVersion(id)).to.equal(before);
  });

  it('89: a strategy no-op (Sliding(10) over one event) makes no repository write', async function () {
    const id = await sessionWith('only');
    const before = await repo.getEventVersion(id);
    const r = await service.compact(id, () => true, sliding(10));
    expect(r.archivedEvents).to.deep.equal([]);
    expect(texts(await service.getEvents(id))).to.deep.equal(['only']);
    expect(await repo.getEventVersion(id)).to.equal(before);
  });

  it('90: getEvents with lastN(2) returns the last two events', async function () {
    const id = await sessionWith('a', 'b', 'c');
    expect(texts(await service.getEvents(id, EventFilter.lastN(2)))).to.deep.equal(['b', 'c']);
  });

  /** Races two compactions whose strategies both wait until both have read the window. */
  async function raceGated(first: DefaultSessionService, second: DefaultSessionService, id: string) {
    const arrive = barrier(2);
    const versionsSeen: number[] = [];
    const gated = (inner: CompactionStrategy) => async (req: CompactionRequest) => {
      versionsSeen.push(await repo.getEventVersion(id));
      await arrive();
      return inner.compact(req);
    };
    const results = await Promise.all([
      first.compact(id, () => true, gated(sliding(2))),
      second.compact(id, () => true, gated(sliding(2))),
    ]);
    return { results, versionsSeen };
  }

  async function expectOneWinner(id: string, results: CompactionResult[], versionsSeen: number[]) {
    expect(versionsSeen).to.have.length(2);
    expect(versionsSeen[0]).to.equal(versionsSeen[1]);
    const [a, b] = results as [CompactionResult, CompactionResult];
    expect(a.eventsRemoved + b.eventsRemoved).to.equal(3);
    expect([a.eventsRemoved, b.eventsRemoved].sort()).to.deep.equal([0, 3]);
    const loser = a.eventsRemoved === 0 ? a : b;
    expect(loser.archivedEvents).to.deep.equal([]);
    expect(loser.tokensEstimatedSaved).to.equal(0);
    expect(texts(loser.compactedEvents)).to.deep.equal(msgTexts(5));
    expect(texts(await service.getEvents(id, EventFilter.active()))).to.deep.equal(['msg-4', 'msg-5']);
    const all = await service.getEvents(id);
    expect(texts(all)).to.deep.equal(msgTexts(5));
    expect(all.filter((e) => e.isArchived())).to.have.length(3);
  }

  it('91: two services (two processes) race compactions on one version — one wins, the loser archives nothing', async function () {
    const id = await sessionWith(...msgTexts(5));
    const other = new DefaultSessionService(repo, { logger: silent });
    const { results, versionsSeen } = await raceGated(service, other, id);
    await expectOneWinner(id, results, versionsSeen);
  });

  it('91: without the in-process lock, two compact calls on one service race and the CAS picks one winner', async function () {
    const unlocked = new DefaultSessionService(repo, { logger: silent, lockCompactions: false });
    const id = await sessionWith(...msgTexts(5));
    const { results, versionsSeen } = await raceGated(unlocked, unlocked, id);
    await expectOneWinner(id, results, versionsSeen);
  });

  it('91 (port): with the default per-session lock, concurrent compactions run one after the other', async function () {
    const id = await sessionWith(...msgTexts(5));
    const windows: string[][] = [];
    const recording = async (req: CompactionRequest) => {
      windows.push(texts(req.events) as string[]);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return sliding(2).compact(req);
    };
    const [a, b] = await Promise.all([service.compact(id, () => true, recording), service.compact(id, () => true, recording)]);
    expect(a.eventsRemoved + b.eventsRemoved).to.equal(3);
    expect(windows).to.deep.equal([msgTexts(5), ['msg-4', 'msg-5']]);
    expect(texts(await service.getEvents(id, EventFilter.active()))).to.deep.equal(['msg-4', 'msg-5']);
  });

  it('91 (port): a compaction that throws releases the per-session lock for the next one', async function () {
    const id = await sessionWith(...msgTexts(4));
    await expectRejects(
      service.compact(
        id,
        () => true,
        async () => {
          throw new InvalidArgumentError('strategy failed');
        },
      ),
      InvalidArgumentError,
      'strategy failed',
    );
    const r = await service.compact(id, () => true, sliding(1));
    expect(r.eventsRemoved).to.equal(3);
  });

  it('91 (port): the lock is per session — a compaction waiting on one session does not block another', async function () {
    const blocked = await sessionWith(...msgTexts(3));
    const free = await sessionWith(...msgTexts(3));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = service.compact(
      blocked,
      () => true,
      async (req) => {
        await gate;
        return sliding(1).compact(req);
      },
    );
    const fast = await service.compact(free, () => true, sliding(1));
    expect(fast.eventsRemoved).to.equal(2);
    release();
    expect((await slow).eventsRemoved).to.equal(2);
  });

  it('92: deleteExpiredSessions removes only expired sessions and returns how many', async function () {
    expect(await service.deleteExpiredSessions(new Date())).to.equal(0);
    const live = await service.create({ userId: 'u', timeToLiveMs: 60 * 60 * 1000 });
    const dead = await service.create({ userId: 'u', timeToLiveMs: -1000 });
    expect(await service.deleteExpiredSessions(new Date())).to.equal(1);
    expect(await service.findById(dead.id)).to.equal(null);
    expect(await service.findById(live.id)).to.not.equal(null);
    expect(await service.deleteExpiredSessions(new Date())).to.equal(0);
  });

  it('93: compact on an unknown session rejects with "Session not found: <id>"', async function () {
    await expectRejects(
      service.compact('nope-42', () => true, sliding(2)),
      InvalidArgumentError,
      'Session not found: nope-42',
    );
  });

  it('94: after a CAS loss the result is the active events read, nothing archived, 0 saved', async function () {
    const id = await sessionWith(...msgTexts(5));
    const read = await service.getEvents(id, EventFilter.active());
    const racing = async (req: CompactionRequest) => {
      // A concurrent append lands after the service read the version: the CAS write must fail.
      await service.appendMessage(id, Messages.user('late'));
      return sliding(2).compact(req);
    };
    const r = await service.compact(id, () => true, racing);
    expect(r.archivedEvents).to.deep.equal([]);
    expect(r.tokensEstimatedSaved).to.equal(0);
    expect(r.compactedEvents.map((e) => e.id)).to.deep.equal(read.map((e) => e.id));
    expect(texts(await service.getEvents(id, EventFilter.active()))).to.deep.equal([...msgTexts(5), 'late']);
    expect((await service.getEvents(id)).some((e) => e.isArchived())).to.equal(false);
  });

  it('compact reads the version before the events and passes it to compactEvents', async function () {
    const calls: string[] = [];
    const spy: SessionRepository = Object.create(repo) as SessionRepository;
    spy.getEventVersion = async (sid) => (calls.push('version'), repo.getEventVersion(sid));
    spy.findEvents = async (sid, f) => (calls.push('events'), repo.findEvents(sid, f));
    spy.compactEvents = async (sid, a, r, v) => (calls.push(`cas:${v}`), repo.compactEvents(sid, a, r, v));
    const svc = new DefaultSessionService(spy, { logger: silent });
    const id = await sessionWith(...msgTexts(3));
    await svc.compact(id, () => true, sliding(1));
    // The version is checked again right before the strategy runs (unchanged: no second read of the events).
    expect(calls).to.deep.equal(['version', 'events', 'version', 'cas:3']);
  });

  it('compact only shows the strategy active events (archived ones are never re-processed)', async function () {
    const id = await sessionWith(...msgTexts(5));
    await service.compact(id, () => true, sliding(2));
    let seen: readonly SessionEvent[] = [];
    await service.compact(
      id,
      (req) => ((seen = req.events), false),
      async (req) => CompactionResult.noop(req.events),
    );
    expect(texts(seen)).to.deep.equal(['msg-4', 'msg-5']);
  });

  it('accepts trigger and strategy objects as well as functions', async function () {
    const id = await sessionWith(...msgTexts(4));
    const r = await service.compact(id, { shouldCompact: async () => true }, sliding(1));
    expect(r.eventsRemoved).to.equal(3);
    await expectRejects(service.compact(id, null as unknown as () => boolean, sliding(1)), InvalidArgumentError, 'trigger');
    await expectRejects(
      service.compact(id, () => true, null as unknown as CompactionStrategy),
      InvalidArgumentError,
      'strategy',
    );
  });

  it('blank ids are rejected with InvalidArgumentError', async function () {
    await expectRejects(service.findById(' '), InvalidArgumentError, 'sessionId must not be null or empty');
    await expectRejects(service.findByUserId(''), InvalidArgumentError, 'userId must not be null or empty');
    await expectRejects(service.getEvents(''), InvalidArgumentError, 'sessionId must not be null or empty');
    await expectRejects(service.delete(''), InvalidArgumentError, 'sessionId must not be null or empty');
    await expectRejects(
      service.compact('', () => true, sliding(1)),
      InvalidArgumentError,
      'sessionId must not be null or empty',
    );
    await expectRejects(service.create({ userId: '  ' }), InvalidArgumentError, 'userId must not be null or empty');
  });

  it('appendEvent to an unknown session rejects with "Session not found"', async function () {
    const e = SessionEvent.create({ sessionId: 'ghost', message: Messages.user('x') });
    await expectRejects(service.appendEvent(e), InvalidArgumentError, 'Session not found: ghost');
  });
});
