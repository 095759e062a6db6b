/**
 * `redactEvent` of one event reads what it needs — the event, its original and masked copies, the summaries
 * (RedactionScopeRepository) — never the whole log, on every backend; and it still finds what it must.
 */
import { expect } from 'chai';
import {
  DefaultSessionService,
  EventFilter,
  ExtractiveSummarizer,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  type SessionRepository,
} from 'session-compaction';
import { isRedactionScopeRepository } from 'session-compaction/spi';
import { allBackends, type BuiltInRepository } from '../../support/backends.js';
import { silentLogger } from '../../summarization/support.js';

/** The repository, recording every findEvents call's filter. */
function recordingReads(repo: BuiltInRepository, reads: EventFilter[]): SessionRepository {
  return new Proxy(repo, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (prop === 'findEvents') reads.push((args[1] as EventFilter | undefined) ?? EventFilter.all());
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

for (const backend of allBackends()) {
  describe(`redactEvent reads only the event's scope: ${backend.name}`, function () {
    this.timeout(30_000);
    before(async function () {
      await backend.setup(this);
    });
    after(async () => backend.teardown());

    it('redacts the event and taints the summary quoting it without reading the whole log', async function () {
      const repo = backend.repository();
      expect(isRedactionScopeRepository(repo)).to.equal(true);
      const reads: EventFilter[] = [];
      const service = new DefaultSessionService(recordingReads(repo, reads), { logger: silentLogger });
      const { id } = await service.create({ userId: 'alice' });
      const secret = await service.appendMessage(id, Messages.user('my password is hunter2'));
      await service.appendMessage(id, Messages.assistant('noted: hunter2'));
      for (let i = 0; i < 30; i++) {
        await service.appendMessage(id, Messages.user(`question ${i}`));
        await service.appendMessage(id, Messages.assistant(`answer ${i}`));
      }
      await service.compact(
        id,
        () => true,
        new RecursiveSummarizationCompactionStrategy({
          chatClient: new ExtractiveSummarizer(),
          maxEventsToKeep: 4,
          overlapSize: 0,
        }),
      );
      reads.length = 0;

      const report = await service.redactEvent(id, secret.id, { reason: 'secret' });
      expect(report.redactedEventIds).to.deep.equal([secret.id]);
      expect(report.taintedSummaryIds).to.have.length(1);
      expect(
        reads.filter((f) => !f.excludeArchived),
        'no read of the whole log',
      ).to.deep.equal([]);
      const stored = (await repo.findEvents(id, EventFilter.all())).find((e) => e.id === secret.id)!;
      expect(stored.text).to.equal('[redacted]');
    });

    it('findRedactionScope: the event, its original and masked copies and the synthetic events, in log order; [] for an unknown id', async function () {
      const repo = backend.repository();
      const service = new DefaultSessionService(repo, { logger: silentLogger });
      const { id } = await service.create({ userId: 'bob' });
      const original = await service.appendMessage(id, Messages.user('the original'));
      await service.appendMessage(id, Messages.assistant('unrelated'));
      const copy = await service.appendMessage(id, Messages.user('[masked]'), { metadata: { maskedFrom: original.id } });
      const summary = await service.appendMessage(id, Messages.assistant('a summary'), { metadata: { synthetic: true } });
      expect((await repo.findRedactionScope(id, copy.id)).map((e) => e.id)).to.deep.equal([original.id, copy.id, summary.id]);
      expect((await repo.findRedactionScope(id, original.id)).map((e) => e.id)).to.deep.equal([original.id, copy.id, summary.id]);
      expect(await repo.findRedactionScope(id, 'nope')).to.deep.equal([]);
    });
  });
}
