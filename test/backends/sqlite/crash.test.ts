import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { SqliteSessionRepository, createDefaultLogger } from 'session-compaction';
import { describeCrashSummary, runCrashes } from '../../repository/crashHarness.js';

const logger = createDefaultLogger({ silent: true });

describe('SqliteSessionRepository crash safety', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'sqlite-crash-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('SIGKILL 20 times, mostly mid-compaction: every acknowledged append survives once, no compaction is half-applied', async function () {
    const path = join(dir, 'crash.db');
    const summary = await runCrashes(
      {
        backend: 'sqlite',
        target: path,
        prefix: 'session_compaction',
        open: async () => new SqliteSessionRepository({ path, logger }),
        afterKill: (run) => {
          const raw = new Database(path);
          expect(raw.pragma('integrity_check', { simple: true }), `run ${run}: integrity`).to.equal('ok');
          raw.close();
        },
      },
      'crash',
    );
    console.log(`      ${describeCrashSummary('SQLite', summary)}`);
  });
});
