import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { expect } from 'chai';
import {
  DefaultSessionService,
  InMemorySessionRepository,
  PostgresSessionRepository,
  RedisSessionRepository,
  SqliteSessionRepository,
  createDefaultLogger,
  type Retriever,
  type SessionRepository,
} from '../../src/index.js';
import { RepositoryRetriever } from '../../src/recall/RepositoryRetriever.js';
import { PG_URL, REDIS_URL, requireService } from '../support/services.js';
import { rankingContract } from './rankingContract.js';

const logger = createDefaultLogger({ silent: true });

/**
 * `searchEvents` itself, without RepositoryRetriever's second check of every hit: the contract must hold
 * in the store's own query.
 */
function searchEventsOf(repository: SessionRepository): Retriever {
  return {
    retrieve: async (r) =>
      r.query.trim() === ''
        ? []
        : repository.searchEvents!(r.sessionId, r.query, {
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
    const prefix = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
    let pool: pg.Pool | undefined;
    before(async function () {
      await requireService(this, 'PostgreSQL', async () => {
        const probe = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
        await probe.connect();
        await probe.end();
      });
      pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
    });
    after(async function () {
      if (pool !== undefined) {
        await pool.query(
          `DROP TABLE IF EXISTS ${prefix}_compactions, ${prefix}_events, ${prefix}_sessions, ${prefix}_migrations, ${prefix}_tombstones`,
        );
        await pool.end();
      }
    });

    rankingContract(
      'PostgresSessionRepository.searchEvents',
      async () => {
        const repository = new PostgresSessionRepository({ pool: pool!, prefix, logger });
        return {
          service: new DefaultSessionService(repository, { logger }),
          retriever: searchEventsOf(repository),
          close: async () => {},
        };
      },
      'empty',
    );

    rankingContract('PostgreSQL full-text (push-down)', async () => {
      const repository = new PostgresSessionRepository({ pool: pool!, prefix, logger });
      const retriever = new RepositoryRetriever({ repository });
      return { service: new DefaultSessionService(repository, { logger }), retriever, close: async () => {} };
    });
  });

  describe('Redis', function () {
    const prefix = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
    let client: Redis | undefined;
    before(async function () {
      await requireService(this, 'Redis', async () => {
        const probe = new Redis(REDIS_URL, {
          lazyConnect: true,
          connectTimeout: 2000,
          maxRetriesPerRequest: 0,
          retryStrategy: () => null,
        });
        try {
          await probe.connect();
          await probe.ping();
        } finally {
          probe.disconnect();
        }
      });
      client = new Redis(REDIS_URL);
    });
    after(async function () {
      if (client === undefined) return;
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        if (keys.length > 0) await client.unlink(...keys);
        cursor = next;
      } while (cursor !== '0');
      client.disconnect();
    });

    rankingContract('Redis (in-process BM25 fallback)', async () => {
      const repository = new RedisSessionRepository({ client: client!, prefix, logger });
      const retriever = new RepositoryRetriever({ repository });
      expect(retriever.pushesDown).to.equal(false);
      return { service: new DefaultSessionService(repository, { logger }), retriever, close: async () => {} };
    });
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
});
