/**
 * Events an older release stored malformed (it validated less: a number as text, a tool message without
 * responses, `toolCalls: "x"`, metadata that is not an object) must not poison a session: they read back
 * repaired, filters and compaction keep working, and the coverage verifier reports them. Bytes that are not
 * JSON at all are corruption, not an old shape: test/repository/corruptedRows.test.ts.
 * The rows are written with each store's own client, as the old release left them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import {
  DefaultSessionService,
  EventFilter,
  Messages,
  Session,
  SlidingWindowCompactionStrategy,
  createDefaultLogger,
  type SessionRepository,
  PostgresSessionRepository,
  RedisSessionRepository,
  SqliteSessionRepository,
} from 'session-compaction';
import { REDIS_URL, freshServicePrefix, requireService } from '../support/services.js';
import { postgresPoolFixture } from '../support/postgres.js';
import { deleteRedisKeys, probeRedis } from '../support/redis.js';

const logger = createDefaultLogger({ silent: true });

interface LegacyRow {
  id: string;
  type: string;
  text: string | number | null;
  data: string | null;
  metadata: string;
}

/** What the old release let through, and one good event around them. */
const LEGACY: LegacyRow[] = [
  { id: 'bad-tool-no-responses', type: 'tool', text: null, data: '{}', metadata: '{}' },
  { id: 'bad-toolcalls-string', type: 'assistant', text: 'calling', data: '{"toolCalls":"x"}', metadata: '{}' },
  { id: 'bad-responses-object', type: 'tool', text: null, data: '{"responses":{"temp":22}}', metadata: '{}' },
  { id: 'bad-metadata-array', type: 'user', text: 'hello there', data: null, metadata: '[1,2]' },
  { id: 'bad-user-null-text', type: 'user', text: null, data: null, metadata: '{}' },
];

async function checkLegacySession(repo: SessionRepository, sessionId: string, extraBad: string[] = []): Promise<void> {
  const service = new DefaultSessionService(repo, { logger });
  await service.appendMessage(sessionId, Messages.user('a good question'), { id: 'good' });
  const all = await service.getEvents(sessionId);
  expect(all.map((e) => e.id)).to.include.members([...LEGACY.map((r) => r.id), ...extraBad, 'good']);
  // Filters that used to throw `text.toLowerCase is not a function` now skip text-less events.
  expect((await service.getEvents(sessionId, EventFilter.keywordSearch('good'))).map((e) => e.id)).to.deep.equal(['good']);
  expect((await service.getEvents(sessionId, EventFilter.of({ pattern: /hello/ }))).map((e) => e.id)).to.deep.equal([
    'bad-metadata-array',
  ]);
  const toolNoResponses = all.find((e) => e.id === 'bad-tool-no-responses')!;
  expect(toolNoResponses.message).to.deep.equal({ type: 'tool', responses: [] });
  expect(all.find((e) => e.id === 'bad-toolcalls-string')!.message).to.deep.equal({ type: 'assistant', text: 'calling' });

  const report = await service.verifyCoverage(sessionId);
  expect(report.malformed.map((m) => m.id).sort()).to.deep.equal([...LEGACY.map((r) => r.id), ...extraBad].sort());
  for (const m of report.malformed) expect(m.problems.length, m.id).to.be.greaterThan(0);

  // Compaction still runs over the repaired window.
  const result = await service.compact(sessionId, () => true, new SlidingWindowCompactionStrategy({ maxEvents: 1 }));
  expect(result.compactedEvents.map((e) => e.id)).to.deep.equal(['good']);
}

describe('events stored malformed by an older release', function () {
  describe('SQLite', function () {
    let dir: string;
    before(() => (dir = mkdtempSync(join(tmpdir(), 'legacy-'))));
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('read back repaired: filters, compaction and the coverage verifier keep working', async function () {
      const path = join(dir, 'legacy.db');
      const repo = new SqliteSessionRepository({ path, prefix: 'legacy', logger });
      await repo.save(Session.create({ id: 's', userId: 'u' }));
      const raw = new Database(path);
      const insert = raw.prepare(
        'INSERT INTO legacy_events (session_id, id, timestamp, message_type, text, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)',
      );
      for (const r of LEGACY) insert.run('s', r.id, 1000, r.type, r.text, r.data, r.metadata);
      raw.close();
      try {
        await checkLegacySession(repo, 's');
      } finally {
        await repo.close();
      }
    });
  });

  describe('PostgreSQL', function () {
    const prefix = freshServicePrefix();
    const db = postgresPoolFixture(prefix, { max: 2 });

    it('read back repaired: filters, compaction and the coverage verifier keep working', async function () {
      const pool = db.pool();
      const repo = new PostgresSessionRepository({ pool, prefix, logger });
      await repo.save(Session.create({ id: 's', userId: 'u' }));
      for (const r of LEGACY) {
        await pool.query(
          `INSERT INTO ${prefix}_events (session_id, id, message_type, text, text_lc, data, metadata, "timestamp")
           VALUES ('s', $1, $2, $3, lower($3), $4::jsonb, $5::jsonb, now())`,
          [r.id, r.type, r.text, r.data, r.metadata],
        );
      }
      await checkLegacySession(repo, 's');
      await repo.close();
    });
  });

  describe('Redis', function () {
    const prefix = freshServicePrefix();
    let client: Redis;
    before(async function () {
      await requireService(this, 'Redis', probeRedis);
      client = new Redis(REDIS_URL);
    });
    after(async function () {
      if (client === undefined) return;
      await deleteRedisKeys(client, prefix);
      await client.quit();
    });

    it('read back repaired (a number as text too): filters, compaction and the coverage verifier keep working', async function () {
      const repo = new RedisSessionRepository({ client, prefix, logger });
      await repo.save(Session.create({ id: 's', userId: 'u' }));
      const rows: LegacyRow[] = [...LEGACY, { id: 'bad-text-number', type: 'assistant', text: 42, data: null, metadata: '{}' }];
      for (const r of rows) {
        const stored = {
          id: r.id,
          sessionId: 's',
          timestamp: 1000,
          messageType: r.type,
          text: r.text,
          data: r.data,
          synthetic: false,
          branch: null,
          metadata: r.metadata,
        };
        await client.hset(`${prefix}:{s}:events`, r.id, '0' + JSON.stringify(stored));
        await client.rpush(`${prefix}:{s}:active`, r.id);
      }
      await checkLegacySession(repo, 's', ['bad-text-number']);
      const asText = (await repo.findEvents('s')).find((e) => e.id === 'bad-text-number')!;
      expect(asText.text, 'a number stored as text reads as no text').to.equal(null);
    });
  });
});
