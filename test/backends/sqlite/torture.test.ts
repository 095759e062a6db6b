import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { EventFilter, Session, SqliteSessionRepository, createDefaultLogger } from 'session-compaction';
import { isTurnStart } from 'session-compaction/spi';
import { workerBundle } from '../../support/workerBundle.js';
import { runTorture } from '../../repository/torture.js';
import type { TortureWorkerReport } from './tortureWorker.js';

const here = dirname(fileURLToPath(import.meta.url));
const logger = createDefaultLogger({ silent: true });

/** Runs a worker script (bundled, see workerBundle.ts) and resolves with its stdout once it exits successfully. */
export async function runWorker(script: string, args: string[]): Promise<string> {
  const worker = await workerBundle(join(here, script));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...worker, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${script} exited with ${code}: ${err}`))));
  });
}

describe('SqliteSessionRepository concurrency torture', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'sqlite-torture-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('two processes on one file (8 appenders, 4 compactors): every event once, turn-aligned window, versions only rise, losers no-op', async function () {
    const path = join(dir, 'two-processes.db');
    const sessionId = 'torture';
    const setup = new SqliteSessionRepository({ path, logger });
    await setup.save(Session.create({ id: sessionId, userId: 'torture' }));
    await setup.close();

    const rounds = 25;
    const startAt = String(Date.now() + 2500);
    const outputs = await Promise.all(
      ['p', 'q'].map((tag) => runWorker('tortureWorker.ts', [path, sessionId, tag, '4', '2', String(rounds), startAt])),
    );
    const reports = outputs.map((o) => JSON.parse(o.trim().split('\n').pop()!) as TortureWorkerReport);

    const repo = new SqliteSessionRepository({ path, logger });
    const all = await repo.findEvents(sessionId, EventFilter.all());
    const active = await repo.findEvents(sessionId, EventFilter.active());
    const version = await repo.getEventVersion(sessionId);
    await repo.close();

    const violations = reports.flatMap((r) => r.violations);
    const appended = reports.flatMap((r) => r.appended);
    const expected = appended.flat();
    const committed = reports.reduce((s, r) => s + r.committed, 0);
    const lost = reports.reduce((s, r) => s + r.lost, 0);
    console.log(
      `      two processes: ${expected.length} appended, ${reports.reduce((s, r) => s + r.compactions, 0)} compactions ` +
        `(${committed} committed, ${lost} lost CAS, ${reports.reduce((s, r) => s + r.noops, 0)} nothing to do), ` +
        `${reports.reduce((s, r) => s + r.versionSamples, 0)} version samples, final version ${version}, ` +
        `${all.length - active.length} archived / ${active.length} active`,
    );

    expect(violations).to.deep.equal([]);
    expect(expected).to.have.length(2 * 4 * rounds * 2);
    const ids = all.map((e) => e.id);
    expect(new Set(ids).size, 'no id twice').to.equal(ids.length);
    expect([...ids].sort()).to.deep.equal([...expected].sort());
    for (const list of appended) {
      const positions = list.map((id) => ids.indexOf(id));
      expect(positions, 'each appender’s events keep their order').to.deep.equal([...positions].sort((a, b) => a - b));
    }
    const firstActive = all.findIndex((e) => !e.archived);
    expect(
      all.slice(firstActive).every((e) => !e.archived),
      'archive is a prefix of the log',
    ).to.equal(true);
    expect(active.length === 0 || isTurnStart(active[0]!), 'active window starts at a turn start').to.equal(true);
    expect(version, 'version = appends + committed compactions').to.equal(expected.length + committed);
    expect(committed, 'some compactions committed').to.be.greaterThan(0);
    expect(lost, 'compactors really raced (some lost the CAS)').to.be.greaterThan(0);
  });

  it('one process, one connection per worker on one file: the shared torture invariants hold', async function () {
    const path = join(dir, 'one-process.db');
    const repos: SqliteSessionRepository[] = [];
    const stats = await runTorture({
      makeRepository: () => {
        const repo = new SqliteSessionRepository({ path, logger });
        repos.push(repo);
        return repo;
      },
      appenders: 8,
      compactors: 4,
      rounds: 25,
    });
    for (const r of repos) await r.close();
    console.log(`      one process: ${JSON.stringify({ ...stats, violations: undefined })}`);
    expect(stats.violations).to.deep.equal([]);
  });
});
