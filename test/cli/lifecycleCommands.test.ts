import { expect } from 'chai';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createDefaultLogger,
  DefaultSessionService,
  EventFilter,
  IllegalStateError,
  Messages,
  Session,
  SessionEvent,
} from 'session-compaction';
import { SqliteSessionRepository } from 'session-compaction/sqlite';
import { json, runCli } from './support/runCli.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/sqlite-v1.db', import.meta.url));
const DAY = 86_400_000;
const logger = createDefaultLogger({ silent: true });

interface RetentionOutput {
  sessionsScanned: number;
  sessionsErased: number;
  archivedEventsRemoved: number;
  aborted: boolean;
  erased: { sessionIds: string[]; tombstones: number };
}

describe('cli: retention and erase-user', function () {
  let dir: string;
  let n = 0;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'cli-lifecycle-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * A migrated store: `busy` (user alice) has 6 archived events 120 days old under a summary pair and 2 active
   * events from yesterday; `idle` (user bob) has nothing newer than 60 days; `other` (user carol) is recent.
   */
  async function store(): Promise<string> {
    const path = join(dir, `store-${n++}.db`);
    const repo = new SqliteSessionRepository({ path, logger });
    const now = Date.now();
    const seed = async (id: string, userId: string, archived: number, activeAgeDays: number) => {
      await repo.save(Session.create({ id, userId, createdAt: new Date(now - 150 * DAY), expiresAt: null }));
      const events = Array.from({ length: archived + 2 }, (_, k) =>
        SessionEvent.create({
          sessionId: id,
          id: `${id}-e${k}`,
          message: k % 2 === 0 ? Messages.user(`question ${k} about the plumber`) : Messages.assistant(`answer ${k}`),
          timestamp: new Date(k < archived ? now - 120 * DAY : now - activeAgeDays * DAY),
        }),
      );
      await repo.appendEvents!(id, events);
      if (archived === 0) return;
      const meta = { synthetic: true, compactionSource: 'test', coveredEventIds: events.slice(0, archived).map((e) => e.id) };
      const pair = [
        SessionEvent.create({ sessionId: id, message: Messages.user('Summarize'), metadata: meta }),
        SessionEvent.create({ sessionId: id, message: Messages.assistant('summary'), metadata: meta }),
      ];
      const version = await repo.getEventVersion(id);
      const ok = await repo.compactEvents(id, events.slice(0, archived), [...pair, ...events.slice(archived)], version);
      expect(ok).to.equal(true);
    };
    await seed('busy', 'alice', 6, 1);
    await seed('idle', 'bob', 0, 60);
    await seed('other', 'carol', 0, 1);
    await repo.close();
    return path;
  }

  async function withRepo<T>(path: string, work: (repo: SqliteSessionRepository) => Promise<T>): Promise<T> {
    const repo = new SqliteSessionRepository({ path, logger });
    try {
      return await work(repo);
    } finally {
      await repo.close();
    }
  }

  it('--help lists retention and erase-user', async function () {
    const run = await runCli('--help');
    expect(run.stdout)
      .to.match(/^ {2}retention /m)
      .and.match(/^ {2}erase-user /m);
  });

  it('retention purges old archived events, keeps summaries and the active window, erases idle sessions with a tombstone', async function () {
    const path = await store();
    const run = await runCli(
      'retention',
      '--url',
      `sqlite:${path}`,
      '--archived-older-than',
      '90d',
      '--idle-longer-than',
      '30d',
      '--batch-size',
      '4',
      '--pause',
      '1ms',
      '--json',
    );
    expect(run.code, run.stderr).to.equal(0);
    const report = json<RetentionOutput>(run);
    expect(report).to.include({ sessionsScanned: 3, sessionsErased: 1, archivedEventsRemoved: 6, aborted: false });
    expect(report.erased)
      .to.include({ tombstones: 1 })
      .and.deep.include({ sessionIds: ['idle'] });
    await withRepo(path, async (repo) => {
      const left = await repo.findEvents('busy', EventFilter.all());
      expect(left.map((e) => e.text)).to.deep.equal(['Summarize', 'summary', 'question 6 about the plumber', 'answer 7']);
      expect(await repo.findById('idle')).to.equal(null);
      expect(await repo.findTombstone('idle')).to.not.equal(null);
      expect(await repo.findEvents('other', EventFilter.all())).to.have.length(2);
      const refused = await new DefaultSessionService(repo, { logger })
        .create({ userId: 'mallory', id: 'idle' })
        .catch((e: Error) => e);
      expect(refused).to.be.instanceOf(IllegalStateError);
    });
  });

  it('a second retention run with the same policy removes nothing', async function () {
    const path = await store();
    const args = ['retention', '--url', `sqlite:${path}`, '--archived-older-than', '90d', '--idle-longer-than', '30d', '--json'];
    expect((await runCli(...args)).code).to.equal(0);
    const again = json<RetentionOutput>(await runCli(...args));
    expect(again).to.include({ sessionsErased: 0, archivedEventsRemoved: 0 });
  });

  it('retention --max-archived keeps the newest archived events per session', async function () {
    const path = await store();
    const run = await runCli('retention', '--url', `sqlite:${path}`, '--max-archived', '2', '--json');
    expect(json<RetentionOutput>(run)).to.include({ archivedEventsRemoved: 4, sessionsErased: 0 });
    await withRepo(path, async (repo) => {
      const archived = (await repo.findEvents('busy', EventFilter.all())).filter((e) => e.archived).map((e) => e.id);
      expect(archived).to.deep.equal(['busy-e4', 'busy-e5']);
    });
  });

  it('retention without a rule, or with a malformed duration, exits 2 and changes nothing', async function () {
    const path = await store();
    const none = await runCli('retention', '--url', `sqlite:${path}`);
    expect(none.code).to.equal(2);
    expect(none.stderr).to.include('give at least one of --archived-older-than');
    const bad = await runCli('retention', '--url', `sqlite:${path}`, '--archived-older-than', 'ninety days');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include("--archived-older-than must be a duration such as 90d, 12h, 30m or 45s (got 'ninety days')");
    await withRepo(path, async (repo) => expect(await repo.findEvents('busy', EventFilter.all())).to.have.length(10));
  });

  it('erasing commands refuse a store whose schema has no tombstones yet and point to migrate', async function () {
    const path = join(dir, `v1-${n++}.db`);
    copyFileSync(FIXTURE, path);
    for (const args of [
      ['erase-user', 'alice'],
      ['retention', '--idle-longer-than', '30d'],
    ]) {
      const run = await runCli(...args, '--url', `sqlite:${path}`);
      expect(run.code, args.join(' ')).to.equal(2);
      expect(run.stderr).to.include('needs the tombstone schema (version 3)').and.include('session-compaction migrate');
    }
    await withRepo(path, async (repo) => expect(await repo.findByUserId('alice')).to.not.deep.equal([]));
  });

  it('erase-user --dry-run lists the sessions and erases nothing', async function () {
    const path = await store();
    const run = await runCli('erase-user', 'alice', '--url', `sqlite:${path}`, '--dry-run', '--json');
    expect(json(run)).to.deep.include({ dryRun: true, sessions: 1, sessionIds: ['busy'] });
    await withRepo(path, async (repo) => expect(await repo.findById('busy')).to.not.equal(null));
  });

  it('erase-user removes every session of the user with a tombstone, reports by kind, and leaves other users alone', async function () {
    const path = await store();
    const carolBefore = await withRepo(path, async (repo) => JSON.stringify(await repo.findEvents('other', EventFilter.all())));
    const run = await runCli('erase-user', 'alice', '--url', `sqlite:${path}`, '--secure-delete', '--json');
    expect(run.code, run.stderr).to.equal(0);
    expect(json(run)).to.deep.include({
      userId: 'alice',
      sessions: 1,
      sessionIds: ['busy'],
      activeEvents: 2,
      archivedEvents: 6,
      summaries: 2,
      tombstones: 1,
    });
    await withRepo(path, async (repo) => {
      expect(await repo.findByUserId('alice')).to.deep.equal([]);
      expect(await repo.findEvents('busy', EventFilter.all())).to.deep.equal([]);
      expect(await repo.findTombstone('busy')).to.not.equal(null);
      expect(JSON.stringify(await repo.findEvents('other', EventFilter.all()))).to.equal(carolBefore);
    });
    const exported = await runCli(
      'export',
      '--url',
      `sqlite:${path}`,
      '--user',
      'alice',
      '--out',
      join(dir, `alice-${n++}.jsonl`),
      '--json',
    );
    expect(json(exported)).to.include({ sessions: 0, events: 0 });
  });
});
