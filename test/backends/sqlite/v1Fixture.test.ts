/**
 * A database file written by the release whose SQLite schema is version 1 (test/fixtures/sqlite-v1.db, made by
 * test/fixtures/makeSqliteV1.ts) opens with this code, migrates forward, keeps every event as it was, and
 * then behaves like any repository.
 */
import { expect } from 'chai';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventFilter, SqliteSessionRepository } from 'session-compaction';
import { SQLITE_MIGRATIONS } from '../../../src/backends/sqlite/schema.js';
import { repositoryContract } from '../../repository/contract.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/sqlite-v1.db', import.meta.url));
interface ExpectedSession {
  userId: string;
  expiresAt: string | null;
  metadata: Record<string, unknown>;
  version: number;
  events: { id: string; archived: boolean; type: string; text: string | null; branch: string | null; metadata: unknown }[];
}
const EXPECTED = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../fixtures/sqlite-v1.expected.json', import.meta.url)), 'utf8'),
) as Record<string, ExpectedSession>;

const dir = mkdtempSync(join(tmpdir(), 'sqlite-fixture-'));
let n = 0;
/** A private copy: opening the fixture itself would migrate it and leave WAL files next to it. */
function fixtureCopy(): string {
  const path = join(dir, `v1-${n++}.db`);
  copyFileSync(FIXTURE, path);
  return path;
}
after(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite database from the schema-version-1 release', function () {
  it('reports version 1 applied and every later version pending', async function () {
    const repo = new SqliteSessionRepository({ path: fixtureCopy(), initializeSchema: false });
    try {
      const status = await repo.schemaStatus();
      expect(status.applied).to.deep.equal([1]);
      expect(status.pending.map((s) => s.version)).to.deep.equal(
        SQLITE_MIGRATIONS.map((m) => m.version)
          .filter((v) => v > 1)
          .sort((a, b) => a - b),
      );
    } finally {
      await repo.close();
    }
  });

  it('migrates forward and reads back every session, event, archived flag and version unchanged', async function () {
    const repo = new SqliteSessionRepository({ path: fixtureCopy() });
    try {
      for (const [id, expected] of Object.entries(EXPECTED)) {
        const session = await repo.findById(id);
        expect(session?.userId, id).to.equal(expected.userId);
        expect(session?.expiresAt?.toISOString() ?? null, id).to.equal(expected.expiresAt);
        expect(session?.metadata, id).to.deep.equal(expected.metadata);
        expect(await repo.getEventVersion(id), id).to.equal(expected.version);
        const events = await repo.findEvents(id, EventFilter.all());
        expect(
          events.map((e) => ({
            id: e.id,
            archived: e.archived,
            type: e.messageType,
            text: e.text,
            branch: e.branch,
            metadata: e.metadata,
          })),
          id,
        ).to.deep.equal(expected.events);
      }
      expect((await repo.schemaStatus()).pending).to.deep.equal([]);
      expect(await repo.findExpiredSessionIds(new Date('2025-01-01T00:00:00Z'))).to.deep.equal(['fixture-expired']);
    } finally {
      await repo.close();
    }
  });
});

repositoryContract('SqliteSessionRepository (schema-v1 file, migrated)', async () => {
  const repo = new SqliteSessionRepository({ path: fixtureCopy() });
  await repo.migrate();
  return repo;
});
