import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { SqliteSessionRepository, createDefaultLogger } from 'session-compaction';
import {
  describeCrashSummary,
  describeForkCrashSummary,
  runCrashes,
  runForkCrashes,
  seedForkSource,
} from '../../repository/crashHarness.js';

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

  it('SIGKILL 10 times inside a fork: every fork in the file is a whole copy, none empty or partial', async function () {
    const path = join(dir, 'fork-crash.db');
    const setup = new SqliteSessionRepository({ path, logger });
    await seedForkSource(setup, 'fork-source');
    await setup.close();
    const summary = await runForkCrashes(
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
      'fork-source',
    );
    console.log(`      ${describeForkCrashSummary('SQLite', summary)}`);
  });
});
