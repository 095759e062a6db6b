/**
 * Ordinary large messages on every backend: a 600 KB tool result of identifiers and 2 MB of prose are
 * stored whole and read back identical; search finds the words of the indexed prefix
 * (MAX_INDEXED_CHARACTERS) and, identically on every backend, not the words past it. PostgreSQL used to refuse
 * both appends (tsvector over 1 MB, DatabaseError 54000), so a session holding one could not be copied from
 * SQLite to PostgreSQL either.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import {
  Bm25Retriever,
  DefaultSessionService,
  EventFilter,
  Messages,
  Session,
  SessionEvent,
  type SessionRepository,
} from 'session-compaction';
import { PostgresSessionRepository } from 'session-compaction/postgres';
import { isSearchableRepository, MAX_INDEXED_CHARACTERS } from 'session-compaction/spi';
import { SqliteSessionRepository } from 'session-compaction/sqlite';
import { copySessions } from '../../cli/src/admin/copySessions.js';
import { allBackends } from '../support/backends.js';
import { dropPostgresTables, freshPostgresPrefix, probePostgres } from '../support/postgres.js';
import { PG_URL, requireService } from '../support/services.js';
import { silentLogger } from '../summarization/support.js';

const HEAD = 'zebracrossing';
const TAIL = 'quokkaisland';

/** ~600 KB of UUIDs: every one a new lexeme, and its parts too (what made PostgreSQL refuse it). */
function identifierHeavyResult(): string {
  const ids = Array.from({ length: 16_300 }, () => randomUUID());
  return `${HEAD} ${ids.join(' ')} ${TAIL}`;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** ~2 MB of prose with a large vocabulary (made-up words): the tail word only far past the indexed prefix. */
function longProse(): string {
  const bytes = randomBytes(1_800_000);
  const words: string[] = [];
  for (let i = 0; i + 7 <= bytes.length; i += 7) {
    words.push(Array.from(bytes.subarray(i, i + 7), (b) => LETTERS[b % 26]).join(''));
  }
  const sentences: string[] = [];
  for (let i = 0; i < words.length; i += 12) sentences.push(`${words.slice(i, i + 12).join(' ')}.`);
  return `${HEAD} ${sentences.join(' ')} ${TAIL}`;
}

async function sessionWithLargeMessages(repo: SessionRepository, sessionId: string) {
  const tool = identifierHeavyResult();
  const prose = longProse();
  expect(tool.length).to.be.greaterThan(590_000);
  expect(prose.length).to.be.greaterThan(2_000_000);
  await repo.save(Session.create({ id: sessionId, userId: 'u' }));
  const call = SessionEvent.create({
    sessionId,
    id: `${sessionId}-call`,
    message: Messages.assistant(null, { toolCalls: [{ id: 'c1', type: 'function', name: 'list_ids', arguments: '{}' }] }),
  });
  const result = SessionEvent.create({
    sessionId,
    id: `${sessionId}-result`,
    message: Messages.tool([{ id: 'c1', name: 'list_ids', responseData: tool }]),
  });
  const user = SessionEvent.create({ sessionId, id: `${sessionId}-prose`, message: Messages.user(prose) });
  for (const e of [call, result, user]) await repo.appendEvent(e);
  return { tool, prose };
}

describe('large messages are stored whole and indexed up to MAX_INDEXED_CHARACTERS', function () {
  it('the indexed prefix is far below what PostgreSQL can index', function () {
    expect(MAX_INDEXED_CHARACTERS).to.equal(100_000);
  });

  for (const backend of allBackends()) {
    describe(backend.name, function () {
      this.timeout(120_000);
      before(async function () {
        await backend.setup(this);
      });
      after(async () => backend.teardown());

      it('a 600 KB tool result of identifiers and 2 MB of prose append and read back identical', async function () {
        const repo = backend.repository();
        const id = `big-${randomBytes(4).toString('hex')}`;
        const { tool, prose } = await sessionWithLargeMessages(repo, id);
        const log = await repo.findEvents(id, EventFilter.all());
        expect(log.map((e) => e.id)).to.deep.equal([`${id}-call`, `${id}-result`, `${id}-prose`]);
        const back = log[1]!.message;
        expect(back.type === 'tool' && back.responses[0]!.responseData === tool).to.equal(true);
        expect(log[2]!.text === prose).to.equal(true);
      });

      it('search finds a word of the indexed prefix and not one past it, in the store and in process alike', async function () {
        const repo = backend.repository();
        const id = `big-${randomBytes(4).toString('hex')}`;
        await sessionWithLargeMessages(repo, id);
        const service = new DefaultSessionService(repo, { logger: silentLogger });
        const bm25 = new Bm25Retriever({ sessionService: service });
        try {
          const found = async (query: string) =>
            (await bm25.retrieve({ sessionId: id, userId: 'u', query, includeActive: true })).map((h) => h.event.id).sort();
          expect(await found(HEAD)).to.deep.equal([`${id}-prose`, `${id}-result`]);
          expect(await found(TAIL)).to.deep.equal([]);
          if (isSearchableRepository(repo)) {
            const pushed = async (query: string) =>
              (await repo.searchEvents(id, query, { includeActive: true })).map((h) => h.event.id).sort();
            expect(await pushed(HEAD)).to.deep.equal([`${id}-prose`, `${id}-result`]);
            expect(await pushed(TAIL)).to.deep.equal([]);
          }
        } finally {
          bm25.close();
        }
      });
    });
  }

  describe('copy SQLite → PostgreSQL', function () {
    this.timeout(120_000);
    let dir: string;
    let pool: pg.Pool | undefined;
    const prefix = freshPostgresPrefix();
    before(async function () {
      await requireService(this, 'PostgreSQL', probePostgres);
      dir = mkdtempSync(join(tmpdir(), 'large-copy-'));
      pool = new pg.Pool({ connectionString: PG_URL, max: 3 });
    });
    after(async function () {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      if (pool === undefined) return;
      await dropPostgresTables(pool, prefix);
      await pool.end();
    });

    it('a session holding such messages copies and verifies identical', async function () {
      const source = new SqliteSessionRepository({ path: join(dir, 'source.db'), logger: silentLogger });
      const target = new PostgresSessionRepository({ pool: pool!, prefix, logger: silentLogger });
      try {
        await sessionWithLargeMessages(source, 'big-copy');
        const report = await copySessions(source, target, { concurrency: 1 });
        expect(report.failures).to.deep.equal([]);
        expect(report.verification).to.deep.equal({ checked: 1, mismatches: [] });
        const back = await target.findEvents('big-copy', EventFilter.all());
        expect(back.map((e) => e.text)).to.deep.equal(
          (await source.findEvents('big-copy', EventFilter.all())).map((e) => e.text),
        );
      } finally {
        await source.close();
        await target.close();
      }
    });
  });
});
