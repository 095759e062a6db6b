/**
 * A rewrite (redaction, regeneration of tainted summaries) computed from a log that changed since is a lost
 * compare-and-set on every backend — `false` from the repository, a retry in the service — never an
 * "Event not found" because the event it meant to rewrite was replaced meanwhile.
 */
import { expect } from 'chai';
import {
  DefaultSessionService,
  EventFilter,
  ExtractiveSummarizer,
  InvalidArgumentError,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  Session,
  SessionEvent,
  type SessionRepository,
} from 'session-compaction';
import { allBackends, type BuiltInRepository } from '../support/backends.js';
import { expectRejects } from '../support/fixtures.js';
import { silentLogger } from '../summarization/support.js';

let counter = 0;
const uid = (p: string) => `${p}-stale-${Date.now().toString(36)}-${(counter++).toString(36)}`;

/** The repository, with `beforeRewrite` run right before the first (or every) rewriteEvents call goes through. */
function racingRewrite(repo: BuiltInRepository, beforeRewrite: () => Promise<void>, every = false): SessionRepository {
  let raced = false;
  return new Proxy(repo, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (prop === 'rewriteEvents') {
        return async (...args: Parameters<BuiltInRepository['rewriteEvents']>) => {
          if (!raced || every) {
            raced = true;
            await beforeRewrite();
          }
          return target.rewriteEvents(...args);
        };
      }
      return (...args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(target, args);
    },
  });
}

for (const backend of allBackends()) {
  describe(`stale rewrites lose their compare-and-set: ${backend.name}`, function () {
    this.timeout(30_000);
    before(async function () {
      await backend.setup(this);
    });
    after(async () => backend.teardown());

    async function sessionWith(repo: BuiltInRepository, ...texts: string[]) {
      const s = await repo.save(Session.create({ id: uid('s'), userId: 'u' }));
      const events = texts.map((t) => SessionEvent.create({ sessionId: s.id, id: uid('e'), message: Messages.user(t) }));
      for (const e of events) await repo.appendEvent(e);
      return { id: s.id, events };
    }

    it('rewriteEvents with a stale version returns false even when its event was dropped since', async function () {
      const repo = backend.repository();
      const { id, events } = await sessionWith(repo, 'a', 'b', 'c');
      const [a, b, c] = events as [SessionEvent, SessionEvent, SessionEvent];
      const stale = await repo.getEventVersion(id);
      // A compaction replaced `a` (dropped from the window: gone from the log).
      expect(await repo.compactEvents(id, [], [b, c], stale)).to.equal(true);
      const now = await repo.getEventVersion(id);
      expect(await repo.rewriteEvents(id, [a.with({ message: Messages.user('[redacted]') })], stale)).to.equal(false);
      expect(await repo.getEventVersion(id)).to.equal(now);
      expect((await repo.findEvents(id, EventFilter.all())).map((e) => e.text)).to.deep.equal(['b', 'c']);
    });

    it('rewriteEvents with the current version still says "Event not found" for an event not in the log', async function () {
      const repo = backend.repository();
      const { id, events } = await sessionWith(repo, 'a', 'b');
      const version = await repo.getEventVersion(id);
      expect(await repo.compactEvents(id, [], [events[1]!], version)).to.equal(true);
      const current = await repo.getEventVersion(id);
      await expectRejects(
        repo.rewriteEvents(id, [events[0]!.with({ message: Messages.user('x') })], current),
        InvalidArgumentError,
        `Event not found: ${events[0]!.id}`,
      );
      expect(await repo.getEventVersion(id)).to.equal(current);
    });

    it('purgeDerived racing a compaction that replaced the tainted summary retries instead of throwing', async function () {
      const repo = backend.repository();
      let sessionId = '';
      // Between purgeDerived's read and its write, the summary pair it means to regenerate leaves the window.
      const raced = racingRewrite(repo, async () => {
        const version = await repo.getEventVersion(sessionId);
        const active = await repo.findEvents(sessionId, EventFilter.active());
        expect(
          await repo.compactEvents(
            sessionId,
            [],
            active.filter((e) => !e.isSynthetic()),
            version,
          ),
        ).to.equal(true);
      });
      const service = new DefaultSessionService(raced, { logger: silentLogger });
      const { id } = await service.create({ userId: 'alice' });
      sessionId = id;
      const secret = await service.appendMessage(id, Messages.user('my password is hunter2'));
      await service.appendMessage(id, Messages.assistant('noted: hunter2'));
      for (let i = 0; i < 3; i++) {
        await service.appendMessage(id, Messages.user(`question ${i}`));
        await service.appendMessage(id, Messages.assistant(`answer ${i}`));
      }
      const strategy = new RecursiveSummarizationCompactionStrategy({
        chatClient: new ExtractiveSummarizer(),
        maxEventsToKeep: 2,
        overlapSize: 0,
      });
      await service.compact(id, () => true, strategy);
      // Redaction goes through the proxy too: its first rewrite is the raced one, so redact on the store itself.
      const direct = new DefaultSessionService(repo, { logger: silentLogger });
      const report = await direct.redactEvent(id, secret.id, { reason: 'secret' });
      expect(report.taintedSummaryIds).to.have.length(1);

      const purged = await service.purgeDerived(id, secret.id);
      // The retry read the log again: the tainted summary is gone, so nothing is left to regenerate.
      expect(purged.regeneratedSummaryIds).to.deep.equal([]);
      const log = await repo.findEvents(id, EventFilter.all());
      expect(log.some((e) => e.id === report.taintedSummaryIds[0])).to.equal(false);
    });

    it('compact() whose regeneration of a tainted summary keeps losing its race skips as a CAS conflict, never throws', async function () {
      const repo = backend.repository();
      let sessionId = '';
      // Another writer appends before every rewrite: each regeneration attempt is stale.
      const raced = racingRewrite(
        repo,
        async () =>
          void (await repo.appendEvent(SessionEvent.create({ sessionId, id: uid('e'), message: Messages.user('more') }))),
        true,
      );
      const service = new DefaultSessionService(raced, { logger: silentLogger });
      const direct = new DefaultSessionService(repo, { logger: silentLogger });
      const { id } = await direct.create({ userId: 'alice' });
      sessionId = id;
      const secret = await direct.appendMessage(id, Messages.user('my password is hunter2'));
      await direct.appendMessage(id, Messages.assistant('noted: hunter2'));
      for (let i = 0; i < 3; i++) {
        await direct.appendMessage(id, Messages.user(`question ${i}`));
        await direct.appendMessage(id, Messages.assistant(`answer ${i}`));
      }
      const strategy = () =>
        new RecursiveSummarizationCompactionStrategy({
          chatClient: new ExtractiveSummarizer(),
          maxEventsToKeep: 2,
          overlapSize: 0,
        });
      await direct.compact(id, () => true, strategy());
      await direct.redactEvent(id, secret.id, { reason: 'secret' });
      const skipped: string[] = [];
      service.events.on('compactionSkipped', (e) => skipped.push(e.reason));

      const result = await service.compact(id, () => true, strategy());
      expect(result.archivedEvents).to.deep.equal([]);
      expect(skipped).to.deep.equal(['cas-conflict']);
    });
  });
}
