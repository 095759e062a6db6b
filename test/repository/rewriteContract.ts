/**
 * What pinning and reverting a compaction rely on, run by every backend through the repository contract:
 * `compactEvents` writes retained events as given (new metadata lands), and a retained event whose id is
 * archived moves back into the active window, once, at the retained position.
 */
import { expect } from 'chai';
import { EventFilter, Messages, SessionEvent, Session, type SessionRepository } from 'session-compaction';

let counter = 0;
const uid = (p: string) => `${p}-rw-${Date.now().toString(36)}-${(counter++).toString(36)}`;

export function rewriteContract(repo: () => SessionRepository): void {
  describe('compactEvents rewrites (pins, reverts)', function () {
    async function sessionWith(...texts: string[]) {
      const s = await repo().save(Session.create({ id: uid('s'), userId: 'u' }));
      const events = texts.map((t) => SessionEvent.create({ sessionId: s.id, id: uid('e'), message: Messages.user(t) }));
      for (const e of events) await repo().appendEvent(e);
      return { id: s.id, events };
    }

    it('a retained event is stored as given: its new metadata replaces the old', async function () {
      const { id, events } = await sessionWith('a', 'b');
      const pinned = events[0]!.with({ metadata: { pinned: true } });
      expect(await repo().compactEvents(id, [], [pinned, events[1]!], await repo().getEventVersion(id))).to.equal(true);
      const active = await repo().findEvents(id, EventFilter.active());
      expect(active.map((e) => [e.text, e.isPinned()])).to.deep.equal([
        ['a', true],
        ['b', false],
      ]);
      expect(await repo().findEvents(id, EventFilter.all())).to.have.length(2);
    });

    it('a retained event whose id is archived moves back to the active window, stored once', async function () {
      const { id, events } = await sessionWith('a', 'b', 'c');
      const [a, b, c] = events as [SessionEvent, SessionEvent, SessionEvent];
      expect(await repo().compactEvents(id, [a, b], [c], await repo().getEventVersion(id))).to.equal(true);
      expect(await repo().compactEvents(id, [], [a, b, c], await repo().getEventVersion(id))).to.equal(true);
      expect((await repo().findEvents(id, EventFilter.active())).map((e) => e.text)).to.deep.equal(['a', 'b', 'c']);
      const all = await repo().findEvents(id, EventFilter.all());
      expect(all.map((e) => [e.text, e.archived])).to.deep.equal([
        ['a', false],
        ['b', false],
        ['c', false],
      ]);
      // Appends still land after the restored window.
      await repo().appendEvent(SessionEvent.create({ sessionId: id, id: uid('e'), message: Messages.user('d') }));
      expect((await repo().findEvents(id, EventFilter.active())).map((e) => e.text)).to.deep.equal(['a', 'b', 'c', 'd']);
    });
  });
}
