import { expect } from 'chai';
import {
  EventFilter,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  Session,
  SessionEvent,
} from 'session-compaction';
import { expectRejects, texts } from '../support/fixtures.js';

const SID = 'repo-session';

describe('InMemorySessionRepository', function () {
  let repo: InMemorySessionRepository;

  beforeEach(async function () {
    repo = new InMemorySessionRepository();
    await repo.save(Session.create({ id: SID, userId: 'user-1' }));
  });

  const ev = (text: string, init: Partial<Parameters<typeof SessionEvent.create>[0]> = {}) =>
    SessionEvent.create({ sessionId: SID, message: Messages.user(text), ...init });
  const synthetic = (text: string, type: 'user' | 'assistant' = 'assistant') =>
    SessionEvent.create({
      sessionId: SID,
      message: type === 'user' ? Messages.user(text) : Messages.assistant(text),
      metadata: { synthetic: true, compactionSource: 'test' },
    });
  async function append(...events: SessionEvent[]): Promise<SessionEvent[]> {
    for (const e of events) await repo.appendEvent(e);
    return events;
  }

  it('95: save then findById returns the same id and userId; an unknown id gives null', async function () {
    const found = await repo.findById(SID);
    expect(found?.id).to.equal(SID);
    expect(found?.userId).to.equal('user-1');
    expect(await repo.findById('unknown')).to.equal(null);
  });

  it('96: appendEvent for an unknown session throws "Session not found"', async function () {
    const e = SessionEvent.create({ sessionId: 'ghost', message: Messages.user('x') });
    await expectRejects(repo.appendEvent(e), InvalidArgumentError, 'Session not found: ghost');
  });

  it('97: the same event id appended twice is stored once and the replay does not bump the version', async function () {
    const e = ev('once', { id: 'fixed-id' });
    await repo.appendEvent(e);
    const v1 = await repo.getEventVersion(SID);
    await repo.appendEvent(ev('replayed with other text', { id: 'fixed-id' }));
    expect(texts(await repo.findEvents(SID))).to.deep.equal(['once']);
    expect(await repo.getEventVersion(SID)).to.equal(v1);
  });

  it('98: two events with different random ids are both stored', async function () {
    await append(ev('same'), ev('same'));
    expect(await repo.findEvents(SID)).to.have.length(2);
  });

  it('99: findEvents(lastN(2)) over msg-1..5 returns msg-4, msg-5', async function () {
    await append(...[1, 2, 3, 4, 5].map((i) => ev(`msg-${i}`)));
    expect(texts(await repo.findEvents(SID, EventFilter.lastN(2)))).to.deep.equal(['msg-4', 'msg-5']);
  });

  it('100: realOnly() drops synthetic events', async function () {
    await append(ev('real'), synthetic('shadow', 'user'), synthetic('summary'));
    expect(texts(await repo.findEvents(SID, EventFilter.realOnly()))).to.deep.equal(['real']);
  });

  it('101: findExpiredSessionIds(now) returns exactly the session that expired', async function () {
    const now = new Date();
    await repo.save(Session.create({ id: 'expired', userId: 'u', expiresAt: new Date(now.getTime() - 60_000) }));
    await repo.save(Session.create({ id: 'fresh', userId: 'u' }));
    expect(await repo.findExpiredSessionIds(now)).to.deep.equal(['expired']);
  });

  it('102: the version is 0 after save, 1 after the first append, 2 after the second', async function () {
    expect(await repo.getEventVersion(SID)).to.equal(0);
    await append(ev('a'));
    expect(await repo.getEventVersion(SID)).to.equal(1);
    await append(ev('b'));
    expect(await repo.getEventVersion(SID)).to.equal(2);
    expect(await repo.getEventVersion('unknown')).to.equal(0);
  });

  it('103: compactEvents archives, retains a summary in the active window and bumps the version', async function () {
    const [e1, e2] = await append(ev('msg-1'), ev('msg-2'));
    const v = await repo.getEventVersion(SID);
    expect(await repo.compactEvents(SID, [e1!], [synthetic('summary'), e2!], v)).to.equal(true);
    expect(await repo.getEventVersion(SID)).to.equal(v + 1);
    expect(texts(await repo.findEvents(SID, EventFilter.active()))).to.deep.equal(['summary', 'msg-2']);
    const all = await repo.findEvents(SID, EventFilter.all());
    expect(texts(all)).to.deep.equal(['msg-1', 'summary', 'msg-2']);
    expect(all[0]!.isArchived()).to.equal(true);
    expect(all[1]!.isArchived()).to.equal(false);
  });

  it('104: compactEvents with a stale version returns false and changes nothing', async function () {
    const [e1] = await append(ev('msg-1'));
    const v = await repo.getEventVersion(SID);
    expect(await repo.compactEvents(SID, [e1!], [ev('should-not-land')], v - 1)).to.equal(false);
    const all = await repo.findEvents(SID);
    expect(texts(all)).to.deep.equal(['msg-1']);
    expect(all[0]!.isArchived()).to.equal(false);
    expect(await repo.getEventVersion(SID)).to.equal(v);
  });

  it('105: a second pass keeps archived history in order and hard-deletes the superseded summary', async function () {
    const [e1, e2, e3] = await append(ev('e1'), ev('e2'), ev('e3'));
    const s1 = synthetic('s1');
    expect(await repo.compactEvents(SID, [e1!], [s1, e2!, e3!], await repo.getEventVersion(SID))).to.equal(true);
    expect(await repo.compactEvents(SID, [e2!], [synthetic('s2'), e3!], await repo.getEventVersion(SID))).to.equal(true);
    expect(texts(await repo.findEvents(SID))).to.deep.equal(['e1', 'e2', 's2', 'e3']);
    expect(texts(await repo.findEvents(SID, EventFilter.active()))).to.deep.equal(['s2', 'e3']);
  });
});
