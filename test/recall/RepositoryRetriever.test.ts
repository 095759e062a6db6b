import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { expect } from 'chai';
import {
  DefaultSessionService,
  InMemorySessionRepository,
  Messages,
  PostgresSessionRepository,
  RedisSessionRepository,
  SqliteSessionRepository,
  createDefaultLogger,
  type Retriever,
  type SessionRepository,
  RepositoryRetriever,
} from 'session-compaction';
import type { SearchableRepository } from 'session-compaction/spi';
import { REDIS_URL, requireService } from '../support/services.js';
import { deleteRedisKeys, freshRedisPrefix, probeRedis } from '../support/redis.js';
import { rankingContract } from './rankingContract.js';
import { freshPostgresPrefix, postgresPoolFixture } from '../support/postgres.js';

const logger = createDefaultLogger({ silent: true });

/**
 * `searchEvents` itself, without RepositoryRetriever's second check of every hit: the contract must hold
 * in the store's own query.
 */
function searchEventsOf(repository: SessionRepository & SearchableRepository): Retriever {
  return {
    retrieve: async (r) =>
      r.query.trim() === ''
        ? []
        : repository.searchEvents(r.sessionId, r.query, {
            limit: r.limit,
            scope: r.scope,
            userId: r.userId,
            includeActive: r.includeActive,
            branch: r.branch,
          }),
  };
}

describe('RepositoryRetriever', function () {
  const dir = mkdtempSync(join(tmpdir(), 'repository-retriever-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  rankingContract(
    'SqliteSessionRepository.searchEvents',
    async () => {
      const repository = new SqliteSessionRepository({ path: join(dir, 'search.db'), logger });
      const retriever = searchEventsOf(repository);
      return { service: new DefaultSessionService(repository, { logger }), retriever, close: () => repository.close() };
    },
    'empty',
  );

  rankingContract('SQLite FTS5 (push-down)', async () => {
    const repository = new SqliteSessionRepository({ path: join(dir, 'contract.db'), logger });
    const retriever = new RepositoryRetriever({ repository });
    expect(retriever.pushesDown).to.equal(true);
    return { service: new DefaultSessionService(repository, { logger }), retriever, close: () => repository.close() };
  });

  describe('PostgreSQL', function () {
    const prefix = freshPostgresPrefix();
    const db = postgresPoolFixture(prefix, { max: 4 });

    rankingContract(
      'PostgresSessionRepository.searchEvents',
      async () => {
        const repository = new PostgresSessionRepository({ pool: db.pool(), prefix, logger });
        return {
          service: new DefaultSessionService(repository, { logger }),
          retriever: searchEventsOf(repository),
          close: async () => {},
        };
      },
      'empty',
    );

    rankingContract('PostgreSQL full-text (push-down)', async () => {
      const repository = new PostgresSessionRepository({ pool: db.pool(), prefix, logger });
      const retriever = new RepositoryRetriever({ repository });
      return { service: new DefaultSessionService(repository, { logger }), retriever, close: async () => {} };
    });
  });

  describe('Redis', function () {
    const prefix = freshRedisPrefix();
    let client: Redis | undefined;
    before(async function () {
      await requireService(this, 'Redis', probeRedis);
      client = new Redis(REDIS_URL);
    });
    after(async function () {
      if (client === undefined) return;
      await deleteRedisKeys(client, prefix);
      client.disconnect();
    });

    rankingContract('Redis (in-process BM25 fallback)', async () => {
      const repository = new RedisSessionRepository({ client: client!, prefix, logger });
      const retriever = new RepositoryRetriever({ repository });
      expect(retriever.pushesDown).to.equal(false);
      return { service: new DefaultSessionService(repository, { logger }), retriever, close: async () => {} };
    });
  });

  it('retrieveWithNeighbours leaves the neighbourhoods to findEventNeighbours when the access rules drop a hit of the session', async function () {
    const repository = new InMemorySessionRepository();
    const service = new DefaultSessionService(repository, { logger });
    await service.create({ id: 's', userId: 'u' });
    await service.appendMessage('s', Messages.user('root budget'));
    await service.appendMessage('s', Messages.user('branch budget'), { branch: 'b' });
    const [root, branched] = await service.getEvents('s');
    const stored = [root!, branched!];
    const neighbours = [[root!, branched!]];
    // A custom store whose search ignores the branch: RepositoryRetriever drops the branched hit again.
    const custom = Object.assign(repository, {
      searchEvents: async () => stored.map((event, i) => ({ event, score: 2 - i })),
      searchEventsWithNeighbours: async () => ({ hits: stored.map((event, i) => ({ event, score: 2 - i })), neighbours }),
    });
    const retriever = new RepositoryRetriever({ repository: custom });
    const request = { sessionId: 's', query: 'budget', includeActive: true };
    const dropped = await retriever.retrieveWithNeighbours(request, 1);
    expect(dropped.hits.map((h) => h.event.id)).to.deep.equal([root!.id]);
    expect(dropped.neighbours).to.equal(null);
    const kept = await retriever.retrieveWithNeighbours({ ...request, branch: 'b' }, 1);
    expect(kept.hits.map((h) => h.event.id)).to.deep.equal([root!.id, branched!.id]);
    expect(kept.neighbours).to.equal(neighbours);
  });

  it('sends requests to the fallback when the repository cannot search', async function () {
    const seen: string[] = [];
    const retriever = new RepositoryRetriever({
      repository: new InMemorySessionRepository(),
      fallback: { retrieve: async (request) => (seen.push(request.query), []) },
    });
    expect(retriever.pushesDown).to.equal(false);
    expect(await retriever.retrieve({ sessionId: 's', query: 'budget' })).to.deep.equal([]);
    expect(seen).to.deep.equal(['budget']);
  });

  it("prepare starts the fallback's reads where requests go to it, and nothing where the store searches itself", async function () {
    const prepared: string[] = [];
    const handles: unknown[] = [];
    const fallback: Retriever = {
      retrieve: async (request) => (handles.push(request.prepared), []),
      prepare: (sessionId) => (prepared.push(sessionId), Object.freeze({ sessionId })),
    };
    const inProcess = new RepositoryRetriever({ repository: new InMemorySessionRepository(), fallback });
    const handle = inProcess.prepare('s');
    await inProcess.retrieve({ sessionId: 's', query: 'budget', prepared: handle });
    expect(prepared).to.deep.equal(['s']);
    // The request reaches the fallback with its handle.
    expect(handles).to.deep.equal([handle]);
    const sqlite = new SqliteSessionRepository({ path: join(dir, 'prepare.db'), logger });
    try {
      const pushDown = new RepositoryRetriever({ repository: sqlite, fallback });
      expect(pushDown.pushesDown).to.equal(true);
      expect(pushDown.prepare('s')).to.deep.equal({ sessionId: 's' });
      expect(prepared).to.deep.equal(['s']);
    } finally {
      await sqlite.close();
    }
  });
});
