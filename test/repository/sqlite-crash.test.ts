import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { EventFilter, SqliteSessionRepository, createDefaultLogger, isTurnStart } from '../../src/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const logger = createDefaultLogger({ silent: true });

interface Victim {
  acked: string[];
  compactions: number;
  signal: NodeJS.Signals | null;
}

/** Starts the crash worker, kills it with SIGKILL `delayMs` after it is ready, and returns what it acknowledged. */
function runAndKill(path: string, sessionId: string, tag: string, delayMs: number): Promise<Victim> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'sqlite-worker-crash.ts'), path, sessionId, tag], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let armed = false;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!armed && out.includes('ready\n')) {
        armed = true;
        setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      if (signal !== 'SIGKILL') return reject(new Error(`crash worker ended without being killed (${signal}): ${err}`));
      // A line cut by the kill is not an acknowledgement.
      const lines = out.split('\n').slice(0, -1);
      resolve({
        acked: lines.filter((l) => l.startsWith('ack ')).map((l) => l.slice(4)),
        compactions: lines.filter((l) => l === 'compacted').length,
        signal,
      });
    });
  });
}

describe('SqliteSessionRepository crash safety', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'sqlite-crash-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('SIGKILL at 20 random moments: every acknowledged append survives, no compaction is half-applied', async function () {
    const path = join(dir, 'crash.db');
    const sessionId = 'crash';
    const acked = new Set<string>();
    let compactionsBefore = 0;
    let totalAcked = 0;
    let totalCompactions = 0;

    for (let run = 0; run < 20; run++) {
      const victim = await runAndKill(path, sessionId, `r${run}`, 30 + Math.floor(Math.random() * 400));
      for (const id of victim.acked) acked.add(id);
      totalAcked += victim.acked.length;
      totalCompactions += victim.compactions;

      const raw = new Database(path);
      expect(raw.pragma('integrity_check', { simple: true }), `run ${run}: integrity`).to.equal('ok');
      raw.close();

      const repo = new SqliteSessionRepository({ path, logger });
      const all = await repo.findEvents(sessionId, EventFilter.all());
      const active = await repo.findEvents(sessionId, EventFilter.active());
      const version = await repo.getEventVersion(sessionId);
      await repo.close();

      const ids = all.map((e) => e.id);
      const context = `run ${run}`;
      expect(new Set(ids).size, `${context}: no id twice`).to.equal(ids.length);
      const present = new Set(ids);
      const missing = [...acked].filter((id) => !present.has(id));
      expect(missing, `${context}: acknowledged appends missing`).to.deep.equal([]);

      const firstActive = all.findIndex((e) => !e.archived);
      if (firstActive >= 0)
        expect(
          all.slice(firstActive).every((e) => !e.archived),
          `${context}: archive is a prefix`,
        ).to.equal(true);
      expect(
        active.map((e) => e.id),
        `${context}: active() is the non-archived tail`,
      ).to.deep.equal(all.filter((e) => !e.archived).map((e) => e.id));
      // A window is summaries (at most one: a new one supersedes the last) followed by real events from a turn start.
      const synthetic = active.filter((e) => e.isSynthetic());
      expect(synthetic.length, `${context}: superseded summaries removed`).to.be.at.most(1);
      const real = active.filter((e) => !e.isSynthetic());
      expect(
        active.slice(0, synthetic.length).every((e) => e.isSynthetic()),
        `${context}: summary first`,
      ).to.equal(true);
      expect(real.length === 0 || isTurnStart(real[0]!), `${context}: window starts at a turn start`).to.equal(true);
      expect(
        all.filter((e) => e.archived).every((e) => !e.isSynthetic()),
        `${context}: summaries are never archived`,
      ).to.equal(true);

      // version = appended (= real) events + committed compactions; the kill may have hit between a commit and its ack.
      const committed = version - all.filter((e) => !e.isSynthetic()).length;
      expect(committed - compactionsBefore, `${context}: compactions committed this run`)
        .to.be.at.least(victim.compactions)
        .and.at.most(victim.compactions + 1);
      compactionsBefore = committed;
    }
    console.log(
      `      20 kills: ${totalAcked} acknowledged appends and ${totalCompactions} acknowledged compactions, all consistent`,
    );
    expect(totalAcked, 'the victims did real work').to.be.greaterThan(40);
    expect(totalCompactions, 'some compactions committed').to.be.greaterThan(0);
  });
});
