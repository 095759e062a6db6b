import { expect } from 'chai';
import {
  DefaultSessionService,
  EventFilter,
  IllegalStateError,
  InMemorySessionRepository,
  Messages,
  Session,
  SessionEvent,
} from 'session-compaction';
import { Bm25Retriever } from 'session-compaction/recall';
import { compareSnapshots } from '../../../cli/src/admin/compareSessions.js';
import { readSnapshot, type SessionSnapshot } from '../../../cli/src/admin/sessionSnapshot.js';
import { writeSession } from '../../../cli/src/admin/writeSession.js';

function snapshot(version = 8): SessionSnapshot {
  const session = Session.create({ id: 's1', userId: 'alice', createdAt: new Date(Date.UTC(2025, 0, 1)), metadata: { a: 1 } });
  const events = Array.from({ length: 6 }, (_, i) =>
    SessionEvent.create({
      sessionId: 's1',
      id: `e${i}`,
      message: i % 2 === 0 ? Messages.user(`q${i}`) : Messages.assistant(`a${i}`),
      archived: i < 2,
      timestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, i)),
    }),
  );
  return { session, version, events, stable: true };
}

describe('cli: writeSession', function () {
  it('writes the log in order with archived flags and the source version', async function () {
    const target = new InMemorySessionRepository();
    const source = snapshot();
    const outcome = await writeSession(target, source);
    expect(outcome).to.deep.include({ status: 'written', appended: 6, versionBumps: 2 });
    expect(compareSnapshots(source, await readSnapshot(target, 's1'))).to.equal(null);
    expect(await target.getEventVersion('s1')).to.equal(8);
    expect((await target.findEvents('s1', EventFilter.active())).map((e) => e.id)).to.deep.equal(['e2', 'e3', 'e4', 'e5']);
  });

  it('a second run changes nothing', async function () {
    const target = new InMemorySessionRepository();
    await writeSession(target, snapshot());
    expect(await writeSession(target, snapshot())).to.deep.include({ status: 'unchanged', appended: 0, versionBumps: 0 });
    expect(await target.getEventVersion('s1')).to.equal(8);
  });

  it('resumes a target that holds a prefix of the log, appending only the rest', async function () {
    const target = new InMemorySessionRepository();
    const source = snapshot();
    await writeSession(target, { ...source, events: source.events.slice(0, 3) });
    expect(await writeSession(target, source)).to.deep.include({ status: 'resumed', appended: 3 });
    expect(compareSnapshots(source, await readSnapshot(target, 's1'))).to.equal(null);
  });

  it('refuses a target log that is not a prefix, and replaces it with overwrite', async function () {
    const target = new InMemorySessionRepository();
    const source = snapshot();
    await target.save(source.session);
    await target.appendEvent(SessionEvent.create({ sessionId: 's1', id: 'other', message: Messages.user('x') }));
    let error: unknown;
    await writeSession(target, source).catch((e: unknown) => (error = e));
    expect(error).to.be.instanceOf(IllegalStateError);
    expect((error as Error).message).to.include("the target's log differs");
    expect(await writeSession(target, source, { overwrite: true })).to.deep.include({ status: 'overwritten' });
    expect(compareSnapshots(source, await readSnapshot(target, 's1'))).to.equal(null);
  });

  it('the version of an overwritten log is never reached again: a stale CAS write and a warm recall index see the change', async function () {
    const target = new InMemorySessionRepository();
    const source = snapshot();
    // The target's own log (same session row, other events) happens to stand at the source's version, 8.
    await target.save(source.session);
    for (let i = 0; i < 8; i++) {
      const text = i === 3 ? 'the zebra password is hunter2' : `local ${i}`;
      await target.appendEvent(SessionEvent.create({ sessionId: 's1', id: `local${i}`, message: Messages.user(text) }));
    }
    const replaced = await target.getEventVersion('s1');
    expect(replaced).to.equal(8);
    // Another process's retriever, warm on the replaced log (no lifecycle hook of ours reaches it).
    const retriever = new Bm25Retriever({ sessionService: new DefaultSessionService(target) });
    const query = { sessionId: 's1', query: 'zebra password', includeActive: true };
    expect((await retriever.retrieve(query)).map((h) => h.event.id)).to.deep.equal(['local3']);

    expect(await writeSession(target, source, { overwrite: true })).to.deep.include({ status: 'overwritten' });
    expect(await target.getEventVersion('s1')).to.equal(replaced + 1);
    expect(await target.compactEvents('s1', [], [], replaced)).to.equal(false);
    expect(await retriever.retrieve(query)).to.deep.equal([]);
    expect((await target.findEvents('s1', EventFilter.all())).map((e) => e.id)).to.deep.equal(source.events.map((e) => e.id));
  });

  it('never takes over a session id that belongs to another user in the target', async function () {
    const target = new InMemorySessionRepository();
    await target.save(Session.create({ id: 's1', userId: 'mallory' }));
    let error: unknown;
    await writeSession(target, snapshot()).catch((e: unknown) => (error = e));
    expect((error as Error).message).to.include('exists in the target with another owner');
    expect((await target.findById('s1'))!.userId).to.equal('mallory');
  });

  it('keeps a target version at least as high as the source even when there are more events than versions', async function () {
    const target = new InMemorySessionRepository();
    await writeSession(target, snapshot(3));
    expect(await target.getEventVersion('s1')).to.equal(6);
  });
});
