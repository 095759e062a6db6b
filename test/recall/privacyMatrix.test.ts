import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import {
  CompactionResult,
  DefaultSessionService,
  Messages,
  createDefaultLogger,
  type Retriever,
  type SessionRepository,
  type SessionService,
  Bm25Retriever,
  ContextAssembler,
  EmbeddingRetriever,
  HybridRetriever,
  RepositoryRetriever,
} from 'session-compaction';
import { CharacterTokenCountEstimator } from 'session-compaction/spi';
import { propertyParams } from '../support/arbitraries.js';
import { allBackends } from '../support/backends.js';
import { bagOfWordsVector } from '../support/fakeOpenAIServer.js';

const logger = createDefaultLogger({ silent: true });

/**
 * Privacy on every backend with every retriever: for random logs of several users, a 'user'-scoped retrieval
 * never returns another user's event, a 'session'-scoped one never leaves its session, and the assembled
 * prompt never quotes an event of another session. The stores are shared by all runs, so every run owns fresh
 * user and session ids, and every user's text shares the same words: a leak would be found, not missed for
 * lack of matching words.
 */
const RETRIEVERS: Record<string, (service: SessionService, repository: SessionRepository) => Retriever> = {
  Bm25Retriever: (service) => new Bm25Retriever({ sessionService: service, maxIndexedSessions: 3 }),
  RepositoryRetriever: (service, repository) => new RepositoryRetriever({ repository, sessionService: service }),
  EmbeddingRetriever: (service) =>
    new EmbeddingRetriever({ sessionService: service, embed: async (texts) => texts.map((t) => bagOfWordsVector(t, 64)) }),
  HybridRetriever: (service) =>
    new HybridRetriever({
      retrievers: [
        new Bm25Retriever({ sessionService: service }),
        new EmbeddingRetriever({ sessionService: service, embed: async (texts) => texts.map((t) => bagOfWordsVector(t, 64)) }),
      ],
    }),
};

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'omega'];
const textArb = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }).map((w) => w.join(' '));
/** Events of up to 2 users × 2 sessions each; `archived` of each session's events are archived. */
const logArb = fc.array(fc.record({ user: fc.nat(1), session: fc.nat(1), text: textArb }), { minLength: 1, maxLength: 16 });

interface World {
  owners: Map<string, string>;
  users: string[];
}

async function populate(service: SessionService, log: readonly { user: number; session: number; text: string }[], keep: number) {
  const run = randomBytes(5).toString('hex');
  const users = [`alice-${run}`, `bob-${run}`];
  const world: World = { owners: new Map(), users };
  for (const entry of log) {
    const userId = users[entry.user]!;
    const id = `${userId}-s${entry.session}`;
    if (!world.owners.has(id)) {
      world.owners.set(id, userId);
      await service.create({ id, userId });
    }
    await service.appendMessage(id, Messages.user(entry.text));
  }
  for (const id of world.owners.keys()) {
    await service.compact(
      id,
      () => true,
      async (r) =>
        new CompactionResult(keep === 0 ? [] : r.events.slice(-keep), r.events.slice(0, Math.max(0, r.events.length - keep)), 0),
    );
  }
  return world;
}

describe('recall privacy on every backend, with every retriever', function () {
  this.timeout(120_000);
  for (const backend of allBackends()) {
    describe(backend.name, function () {
      let service: DefaultSessionService;
      before(async function () {
        await backend.setup(this);
        service = new DefaultSessionService(backend.repository(), { logger });
      });
      after(() => backend.teardown());

      for (const [name, create] of Object.entries(RETRIEVERS)) {
        it(`${name}: 'user' scope returns only the caller's events, 'session' scope only the session's, and the prompt quotes only its own session`, async function () {
          const retriever = create(service, backend.repository());
          // Hits from the caller's other session in 'user' scope: proof that the searches were not vacuous.
          let crossSession = 0;
          const assembler = new ContextAssembler({
            sessionService: service,
            retriever,
            tokenCountEstimator: new CharacterTokenCountEstimator(),
          });
          await fc.assert(
            fc.asyncProperty(logArb, textArb, fc.integer({ min: 0, max: 2 }), async (log, query, keep) => {
              const world = await populate(service, log, keep);
              for (const [sessionId, owner] of world.owners) {
                for (const includeActive of [false, true]) {
                  const single = await retriever.retrieve({ sessionId, query, includeActive, limit: 100 });
                  for (const hit of single) expect(hit.event.sessionId).to.equal(sessionId);
                  const owned = await retriever.retrieve({ sessionId, query, userId: owner, includeActive, limit: 100 });
                  for (const hit of owned) expect(hit.event.sessionId).to.equal(sessionId);
                  const user = await retriever.retrieve({
                    sessionId,
                    query,
                    scope: 'user',
                    userId: owner,
                    includeActive,
                    limit: 100,
                  });
                  for (const hit of user) expect(world.owners.get(hit.event.sessionId)).to.equal(owner);
                  crossSession += user.filter((h) => h.event.sessionId !== sessionId).length;
                }
                const prompt = await assembler.assemble({ sessionId, maxTokens: 400, query });
                for (const event of [...prompt.recalled, ...prompt.activeEvents]) expect(event.sessionId).to.equal(sessionId);
              }
            }),
            propertyParams(backend.name === 'memory' ? 40 : 12),
          );
          (retriever as { close?: () => void }).close?.();
          expect(crossSession).to.be.greaterThan(0);
        });
      }
    });
  }
});
