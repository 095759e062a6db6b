import { expect } from 'chai';
import fc from 'fast-check';
import {
  Bm25Retriever,
  ContextAssembler,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  PostgresSessionRepository,
  RepositoryRetriever,
  SessionEvent,
  SlidingWindowCompactionStrategy,
  type AssembleRequest,
  type Retriever,
} from 'session-compaction';
import { CharacterTokenCountEstimator } from 'session-compaction/spi';
import { propertyParams } from '../support/arbitraries.js';
import { freshPostgresPrefix, postgresPoolFixture } from '../support/postgres.js';

const silent = { error() {}, warn() {}, info() {}, debug() {} };

/** Records whole-log reads: with neighbours by position there must be none per request. */
class CountingService extends DefaultSessionService {
  wholeLogReads = 0;
  override async getEvents(sessionId: string, filter: EventFilter = EventFilter.all()) {
    if (!filter.excludeArchived && filter.lastN === undefined && filter.pageSize === undefined) this.wholeLogReads++;
    return super.getEvents(sessionId, filter);
  }
}

/** A summary as the summarising strategies archive it: synthetic, naming the events it stands for. */
function archivedSummary(text: string, covered: readonly string[]): SessionEvent {
  return SessionEvent.create({
    sessionId: 's',
    message: Messages.assistant(`summary: ${text}`),
    archived: true,
    metadata: { [SessionEvent.METADATA_SYNTHETIC]: true, coveredEventIds: [...covered] },
  });
}

/** The prompt `retriever` gives (characters as tokens, so budgets are exact). */
function assembleWith(service: DefaultSessionService, retriever: Retriever, request: AssembleRequest) {
  return new ContextAssembler({
    sessionService: service,
    retriever,
    tokenCountEstimator: new CharacterTokenCountEstimator(),
  }).assemble(request);
}

const WORDS = ['kiwi', 'parrot', 'locker', 'code', 'tea', 'garden', 'rain', 'train'];
const textArb = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 5 }).map((w) => w.join(' '));
/** A log's texts, the query, the neighbours asked for and the budget: one prompt to assemble. */
const promptCase = [
  fc.array(textArb, { minLength: 1, maxLength: 40 }),
  textArb,
  fc.integer({ min: 0, max: 3 }),
  fc.integer({ min: 60, max: 600 }),
] as const;

describe('ContextAssembler reads neighbours by position', function () {
  it('property: the prompt is the one the whole log gives, and the log is never read whole', async function () {
    await fc.assert(
      fc.asyncProperty(...promptCase, async (texts, query, neighbors, maxTokens) => {
        const service = new CountingService(new InMemorySessionRepository(), { logger: silent });
        await service.create({ id: 's', userId: 'u' });
        const appended: string[] = [];
        for (const [i, text] of texts.entries()) {
          const e = await service.appendMessage('s', i % 2 === 0 ? Messages.user(text) : Messages.assistant(text));
          appended.push(e.id);
          if (i % 7 === 6) await service.compact('s', () => true, new SlidingWindowCompactionStrategy({ maxEvents: 3 }));
          // An archived summary of two earlier events: quoted only while neither original can be.
          if (i % 9 === 8) await service.appendEvent(archivedSummary(text, appended.slice(-5, -3)));
        }
        const bm25 = new Bm25Retriever({ sessionService: service });
        // The same ranking without the method: the assembler falls back to reading the whole log.
        const wholeLog: Retriever = { retrieve: (r) => bm25.retrieve(r) };
        const request = { sessionId: 's', maxTokens, pending: [Messages.user(query)], recall: { neighbors } };
        const byPosition = await assembleWith(service, bm25, request);
        const reads = service.wholeLogReads;
        const reference = await assembleWith(service, wholeLog, request);
        expect(byPosition.messages).to.deep.equal(reference.messages);
        expect(byPosition.recalled.map((e) => e.id)).to.deep.equal(reference.recalled.map((e) => e.id));
        expect(reads).to.equal(0);
        bm25.close();
      }),
      propertyParams(100),
    );
  });

  it('a wider read that disagrees with the first (the log changed in between) is left out, and the prompt still quotes the log', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    await service.create({ id: 's', userId: 'u' });
    for (let i = 0; i < 40; i++) {
      // Few hits far apart: the events next to them rank on their evidence, and their own neighbours are not read.
      await service.appendMessage('s', i % 10 === 0 ? Messages.user(`kiwi ${i}`) : Messages.assistant(`filler ${i}`));
    }
    await service.compact('s', () => true, new SlidingWindowCompactionStrategy({ maxEvents: 4 }));
    const bm25 = new Bm25Retriever({ sessionService: service });
    let wider = 0;
    const changed: Retriever = {
      retrieve: (r) => bm25.retrieve(r),
      // The second read sees every run backwards, as if the log had been rewritten since the first.
      findEventNeighbours: async (sessionId, ids, radius) => {
        const runs = await bm25.findEventNeighbours(sessionId, ids, radius);
        if (radius <= 2) return runs;
        wider++;
        return runs.map((run) => [...run].reverse());
      },
    };
    const request = { sessionId: 's', maxTokens: 2000, pending: [Messages.user('kiwi')], recall: { neighbors: 2 } };
    const context = await assembleWith(service, changed, request);
    expect(wider).to.equal(1);
    const log = (await service.getEvents('s')).map((e) => e.id);
    const quoted = context.recalled.map((e) => log.indexOf(e.id));
    expect(quoted.length).to.be.greaterThan(0);
    expect(quoted.every((at) => at >= 0)).to.equal(true);
    expect(quoted).to.deep.equal([...quoted].sort((a, b) => a - b));
    bm25.close();
  });

  describe('PostgreSQL: the search reads the neighbourhoods (retrieveWithNeighbours)', function () {
    const prefix = freshPostgresPrefix();
    const db = postgresPoolFixture(prefix, { max: 4 });

    it('property: the prompt is the one the whole log gives, and only the best hits are read apart, in one statement', async function () {
      const repository = new PostgresSessionRepository({ pool: db.pool(), prefix, logger: silent });
      const service = new DefaultSessionService(repository, { logger: silent });
      const neighbourReads: number[] = [];
      const findEventNeighbours = repository.findEventNeighbours.bind(repository);
      repository.findEventNeighbours = (sessionId, ids, radius) => (
        neighbourReads.push(ids.length),
        findEventNeighbours(sessionId, ids, radius)
      );
      let session = 0;
      const retriever = new RepositoryRetriever({ repository, sessionService: service });
      // The same retriever without the fused read: the assembler asks findEventNeighbours itself.
      const apart: Retriever = {
        retrieve: (r) => retriever.retrieve(r),
        findEventNeighbours: (...args) => retriever.findEventNeighbours(...args),
      };
      await fc.assert(
        fc.asyncProperty(...promptCase, async (texts, query, neighbors, maxTokens) => {
          const id = `n${session++}`;
          await service.create({ id, userId: 'u' });
          for (const [i, text] of texts.entries()) {
            await service.appendMessage(id, i % 2 === 0 ? Messages.user(text) : Messages.assistant(text));
            if (i % 7 === 6) await service.compact(id, () => true, new SlidingWindowCompactionStrategy({ maxEvents: 3 }));
          }
          const request = { sessionId: id, maxTokens, pending: [Messages.user(query)], recall: { neighbors } };
          neighbourReads.length = 0;
          const together = await assembleWith(service, retriever, request);
          // The search read the neighbourhoods; only the best of the ranking that lack theirs are read apart.
          expect(neighbourReads.length).to.be.at.most(1);
          expect(neighbourReads.every((n) => n <= 8)).to.equal(true);
          const reference = await assembleWith(service, { retrieve: (r) => retriever.retrieve(r) }, request);
          expect(together.messages).to.deep.equal(reference.messages);
          expect(together.recalled.map((e) => e.id)).to.deep.equal(reference.recalled.map((e) => e.id));
          const separately = await assembleWith(service, apart, request);
          expect(separately.messages).to.deep.equal(reference.messages);
        }),
        propertyParams(25),
      );
    });
  });
});
