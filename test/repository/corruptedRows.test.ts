/**
 * A corrupted row (a hand edit, a half-finished migration): bytes that are not JSON where the library always
 * writes JSON, or session metadata that is not an object. Reading it throws `CorruptedRecordError` naming the
 * session and, for an event row, the event; the user's other sessions stay listable (the corrupted one is
 * left out of `findByUserId` and reported through the logger) and readable. The rows are damaged with each
 * store's own client.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import {
  CorruptedRecordError,
  IllegalStateError,
  Messages,
  PostgresSessionRepository,
  RedisSessionRepository,
  Session,
  SessionEvent,
  SqliteSessionRepository,
  type Logger,
  type SessionRepository,
} from 'session-compaction';
import { postgresPoolFixture } from '../support/postgres.js';
import { deleteRedisKeys, probeRedis } from '../support/redis.js';
import { REDIS_URL, freshServicePrefix, requireService } from '../support/services.js';
import { expectRejects } from '../support/fixtures.js';

/** Records what the repository logs at error level. */
function recordingLogger(): Logger & { errors: { message: string; meta: Record<string, unknown> | undefined }[] } {
  const errors: { message: string; meta: Record<string, unknown> | undefined }[] = [];
  return { errors, error: (message, meta) => errors.push({ message, meta }), warn: () => {}, info: () => {}, debug: () => {} };
}

/** Two sessions of one user, one event each; returns their ids. */
async function twoSessions(repo: SessionRepository): Promise<void> {
  for (const id of ['good', 'bad']) {
    await repo.save(Session.create({ id, userId: 'u', metadata: { title: id } }));
    await repo.appendEvent(SessionEvent.create({ sessionId: id, id: `${id}-e1`, message: Messages.user(`hello from ${id}`) }));
  }
}

async function expectSessionRowCorrupted(repo: SessionRepository, logger: ReturnType<typeof recordingLogger>, problem: string) {
  const error = (await expectRejects(
    repo.findById('bad'),
    CorruptedRecordError,
    'Corrupted stored session bad: metadata',
  )) as CorruptedRecordError;
  expect(error).to.be.instanceOf(IllegalStateError);
  expect(error.message).to.include(problem);
  expect([error.sessionId, error.eventId, error.field]).to.deep.equal(['bad', undefined, 'metadata']);
  // The listing still returns the readable session, and reports the other one.
  expect((await repo.findByUserId('u')).map((s) => s.id)).to.deep.equal(['good']);
  expect(logger.errors).to.have.length(1);
  expect(logger.errors[0]!.meta).to.deep.include({ userId: 'u', sessionId: 'bad' });
  expect((await repo.findById('good'))?.metadata).to.deep.equal({ title: 'good' });
  expect((await repo.findEvents('good')).map((e) => e.text)).to.deep.equal(['hello from good']);
}

async function expectEventRowCorrupted(repo: SessionRepository, eventId: string, field: string) {
  const error = (await expectRejects(
    repo.findEvents('bad'),
    CorruptedRecordError,
    `Corrupted stored event ${eventId} of session bad: ${field} is not JSON`,
  )) as CorruptedRecordError;
  expect([error.sessionId, error.eventId, error.field]).to.deep.equal(['bad', eventId, field]);
  expect((await repo.findEvents('good')).map((e) => e.text)).to.deep.equal(['hello from good']);
}

describe('corrupted rows are named, not swallowed, and do not hide other sessions', function () {
  describe('SQLite', function () {
    let dir: string;
    before(() => (dir = mkdtempSync(join(tmpdir(), 'corrupted-'))));
    after(() => rmSync(dir, { recursive: true, force: true }));

    async function damaged(sql: string): Promise<{ repo: SqliteSessionRepository; logger: ReturnType<typeof recordingLogger> }> {
      const path = join(dir, `${Math.random().toString(36).slice(2)}.db`);
      const logger = recordingLogger();
      const repo = new SqliteSessionRepository({ path, prefix: 'c', logger });
      await twoSessions(repo);
      const raw = new Database(path);
      raw.exec(sql);
      raw.close();
      return { repo, logger };
    }

    it('session metadata that is not JSON: findById names the session, findByUserId lists the other one', async function () {
      const { repo, logger } = await damaged(`UPDATE c_sessions SET metadata = '{"title": oops' WHERE id = 'bad'`);
      await expectSessionRowCorrupted(repo, logger, 'is not JSON');
      await repo.close();
    });

    it('session metadata that is JSON but not an object is corrupted too', async function () {
      const { repo, logger } = await damaged(`UPDATE c_sessions SET metadata = '[1,2]' WHERE id = 'bad'`);
      await expectSessionRowCorrupted(repo, logger, 'is array, not an object');
      await repo.close();
    });

    it('event metadata that is not JSON: reading the log names the session and the event', async function () {
      const { repo } = await damaged(`UPDATE c_events SET metadata = 'not json' WHERE id = 'bad-e1'`);
      await expectEventRowCorrupted(repo, 'bad-e1', 'metadata');
      await repo.close();
    });
  });

  describe('PostgreSQL (jsonb stores only JSON: a non-object is the corruption left)', function () {
    const prefix = freshServicePrefix();
    const db = postgresPoolFixture(prefix, { max: 2 });

    it('session metadata that is not an object: findById names the session, findByUserId lists the other one', async function () {
      const logger = recordingLogger();
      const repo = new PostgresSessionRepository({ pool: db.pool(), prefix, logger });
      await twoSessions(repo);
      await db.pool().query(`UPDATE ${prefix}_sessions SET metadata = '[1,2]'::jsonb WHERE id = 'bad'`);
      await expectSessionRowCorrupted(repo, logger, 'is array, not an object');
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

    async function fresh(sub: string) {
      const logger = recordingLogger();
      const repo = new RedisSessionRepository({ client, prefix: `${prefix}_${sub}`, logger });
      await twoSessions(repo);
      return { repo, logger, base: `${prefix}_${sub}:{bad}` };
    }

    it('session metadata that is not JSON: findById names the session, findByUserId lists the other one', async function () {
      const { repo, logger, base } = await fresh('s');
      await client.hset(`${base}:session`, 'metadata', '{oops');
      await expectSessionRowCorrupted(repo, logger, 'is not JSON');
    });

    it('an event value that is not JSON: reading the log names the session and the event', async function () {
      const { repo, base } = await fresh('v');
      await client.hset(`${base}:events`, 'bad-e1', '0{"id":"bad-e1","sessionId":"bad",');
      await expectEventRowCorrupted(repo, 'bad-e1', 'value');
    });

    it('event metadata that is not JSON inside a readable value names the session and the event', async function () {
      const { repo, base } = await fresh('m');
      const value = (await client.hget(`${base}:events`, 'bad-e1'))!;
      const stored = JSON.parse(value.slice(1)) as Record<string, unknown>;
      await client.hset(`${base}:events`, 'bad-e1', value[0] + JSON.stringify({ ...stored, metadata: 'not json' }));
      await expectEventRowCorrupted(repo, 'bad-e1', 'metadata');
    });
  });
});
