import { expect } from 'chai';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import {
  Bm25Retriever,
  CompactionResult,
  DefaultSessionService,
  EventFilter,
  Messages,
  RepositoryRetriever,
  SessionEvent,
  createDefaultLogger,
  type Retriever,
} from 'session-compaction';
import { isEventNeighbourhoodRepository, isNeighbourSearchRepository } from 'session-compaction/spi';
import { propertyParams } from '../support/arbitraries.js';
import { allBackends } from '../support/backends.js';

const logger = createDefaultLogger({ silent: true });

/** The definition, over the whole log: every event within `radius` of a given one, as maximal runs in log order. */
function expectedRuns(log: readonly SessionEvent[], ids: readonly string[], radius: number): string[][] {
  const covered = new Array<boolean>(log.length).fill(false);
  for (const id of ids) {
    const at = log.findIndex((e) => e.id === id);
    if (at < 0) continue;
    for (let i = Math.max(0, at - radius); i <= Math.min(log.length - 1, at + radius); i++) covered[i] = true;
  }
  const runs: string[][] = [];
  let run: string[] = [];
  log.forEach((e, i) => {
    if (covered[i]) run.push(e.id);
    else if (run.length > 0) (runs.push(run), (run = []));
  });
  if (run.length > 0) runs.push(run);
  return runs;
}

/**
 * A log shaped like a real one: appends, compactions that archive a prefix behind a summary and drop the
 * previous summary (so the stores' sequence numbers have gaps), then more appends.
 */
async function buildLog(service: DefaultSessionService, rounds: readonly number[]): Promise<string> {
  const { id } = await service.create({ id: `n-${randomBytes(6).toString('hex')}`, userId: 'u' });
  for (const [round, appends] of rounds.entries()) {
    for (let i = 0; i < appends; i++) await service.appendMessage(id, Messages.user(`round ${round} message ${i} alpha`));
    await service.compact(
      id,
      () => true,
      async (r) => {
        const real = r.events.filter((e) => !e.isSynthetic());
        const archived = real.slice(0, Math.max(0, real.length - 2));
        if (archived.length === 0) return CompactionResult.noop(r.events);
        const summary = SessionEvent.create({
          sessionId: id,
          message: Messages.assistant(`summary of round ${round}`),
          metadata: { [SessionEvent.METADATA_SYNTHETIC]: true },
        });
        return new CompactionResult([summary, ...real.slice(-2)], archived, 0);
      },
    );
  }
  await service.appendMessage(id, Messages.user('the last word alpha'));
  return id;
}

describe('neighbours by position (findEventNeighbours) on every backend', function () {
  this.timeout(180_000);
  for (const backend of allBackends()) {
    describe(backend.name, function () {
      let service: DefaultSessionService;
      before(async function () {
        await backend.setup(this);
        service = new DefaultSessionService(backend.repository(), { logger });
      });
      after(() => backend.teardown());

      const readers: Record<string, () => Retriever> = {
        RepositoryRetriever: () => new RepositoryRetriever({ repository: backend.repository(), sessionService: service }),
        Bm25Retriever: () => new Bm25Retriever({ sessionService: service }),
        // A fallback that reads no neighbours: on a store without positional reads, the whole log is read once.
        'RepositoryRetriever without a neighbour-reading fallback': () =>
          new RepositoryRetriever({ repository: backend.repository(), fallback: { retrieve: async () => [] } }),
      };
      for (const [name, create] of Object.entries(readers)) {
        it(`${name} returns the runs the whole log defines, for any ids and radius`, async function () {
          const retriever = create();
          await fc.assert(
            fc.asyncProperty(
              fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 4 }),
              fc.array(fc.nat(), { maxLength: 6 }),
              fc.integer({ min: 0, max: 3 }),
              fc.boolean(),
              async (rounds, picks, radius, withUnknown) => {
                const id = await buildLog(service, rounds);
                const log = await service.getEvents(id, EventFilter.all());
                const ids = picks.map((p) => log[p % log.length]!.id);
                if (withUnknown) ids.push('no-such-event');
                // Bm25Retriever answers from its index, as ContextAssembler calls it: right after a search.
                await retriever.retrieve({ sessionId: id, query: 'alpha', includeActive: true });
                const runs = await retriever.findEventNeighbours!(id, ids, radius);
                expect(runs.map((r) => r.map((e) => e.id))).to.deep.equal(expectedRuns(log, ids, radius));
                for (const e of runs.flat()) {
                  const stored = log.find((l) => l.id === e.id)!;
                  expect(e.archived).to.equal(stored.archived);
                  expect(e.text).to.equal(stored.text);
                }
              },
            ),
            propertyParams(backend.name === 'memory' ? 60 : 15),
          );
        });
      }

      it('RepositoryRetriever.retrieveWithNeighbours returns what retrieve then findEventNeighbours do (in one read on PostgreSQL and SQLite)', async function () {
        const repository = backend.repository();
        const retriever = new RepositoryRetriever({ repository, sessionService: service });
        const fused = isNeighbourSearchRepository(repository);
        expect(fused).to.equal(backend.name === 'postgres' || backend.name === 'sqlite');
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 4 }),
            fc.constantFrom('alpha', 'round 1 message', 'summary', 'message 3', 'nothing-matches'),
            fc.integer({ min: 0, max: 3 }),
            fc.integer({ min: 1, max: 6 }),
            async (rounds, query, radius, limit) => {
              const id = await buildLog(service, rounds);
              const request = { sessionId: id, query, limit, includeActive: true };
              const together = await retriever.retrieveWithNeighbours(request, radius);
              const hits = await retriever.retrieve(request);
              expect(together.hits.map((h) => [h.event.id, h.score])).to.deep.equal(hits.map((h) => [h.event.id, h.score]));
              expect(together.hits.map((h) => h.event)).to.deep.equal(hits.map((h) => h.event));
              if (!fused) {
                expect(together.neighbours).to.equal(null);
                return;
              }
              const ids = [...new Set(hits.map((h) => h.event.id))];
              const runs = await retriever.findEventNeighbours(id, ids, radius);
              expect(together.neighbours!.map((r) => r.map((e) => e.id))).to.deep.equal(runs.map((r) => r.map((e) => e.id)));
              expect(together.neighbours!.flat()).to.deep.equal(runs.flat());
            },
          ),
          propertyParams(backend.name === 'memory' ? 30 : 10),
        );
      });

      it("neighbours skip the events of a session written in between, and another session's ids are not read", async function () {
        const repository = backend.repository();
        if (!isEventNeighbourhoodRepository(repository)) this.skip();
        const a = (await service.create({ id: `i-${randomBytes(6).toString('hex')}`, userId: 'u' })).id;
        const b = (await service.create({ id: `i-${randomBytes(6).toString('hex')}`, userId: 'u' })).id;
        // Interleaved writes: the two sessions' events alternate in the store's order.
        for (let i = 0; i < 6; i++) {
          await service.appendMessage(a, Messages.user(`a${i}`));
          await service.appendMessage(b, Messages.user(`b${i}`));
        }
        const logA = await service.getEvents(a, EventFilter.all());
        const logB = await service.getEvents(b, EventFilter.all());
        const texts = (runs: SessionEvent[][]) => runs.map((r) => r.map((e) => e.text));
        expect(texts(await repository.findEventNeighbours(a, [logA[2]!.id, logB[4]!.id], 1))).to.deep.equal([['a1', 'a2', 'a3']]);
        expect(texts(await repository.findEventNeighbours(b, [logB[0]!.id, logB[5]!.id], 1))).to.deep.equal([
          ['b0', 'b1'],
          ['b4', 'b5'],
        ]);
      });

      it('the store reads neighbours itself where it can (SQLite, PostgreSQL), and refuses a bad radius', async function () {
        const repository = backend.repository();
        if (!isEventNeighbourhoodRepository(repository)) {
          expect(backend.name).to.be.oneOf(['memory', 'redis']);
          this.skip();
        }
        const id = await buildLog(service, [3, 2]);
        const log = await service.getEvents(id, EventFilter.all());
        const runs = await repository.findEventNeighbours(id, [log[2]!.id, log[log.length - 1]!.id], 1);
        expect(runs.map((r) => r.map((e) => e.id))).to.deep.equal(expectedRuns(log, [log[2]!.id, log[log.length - 1]!.id], 1));
        expect(await repository.findEventNeighbours('no-such-session', [log[0]!.id], 2)).to.deep.equal([]);
        try {
          await repository.findEventNeighbours(id, [log[0]!.id], -1);
          expect.fail('a negative radius must be refused');
        } catch (error) {
          expect((error as Error).message).to.match(/radius must be an integer/);
        }
      });
    });
  }
});
