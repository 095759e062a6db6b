import Database from 'better-sqlite3';
import { expect } from 'chai';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultSessionService, EventFilter, IllegalStateError, Messages, SessionEvent } from 'session-compaction';
import { SqliteSessionRepository } from 'session-compaction/sqlite';
import { json, runCli } from './support/runCli.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/sqlite-v1.db', import.meta.url));

describe('cli: session-compaction admin commands', function () {
  let dir: string;
  let n = 0;
  /** A private copy of the schema-v1 fixture (5 sessions: chat, tools + masking, summaries, expired, empty). */
  const store = () => {
    const path = join(dir, `store-${n++}.db`);
    copyFileSync(FIXTURE, path);
    return path;
  };
  before(() => (dir = mkdtempSync(join(tmpdir(), 'cli-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--help lists bench and every admin command', async function () {
    const run = await runCli('--help');
    expect(run.code).to.equal(0);
    for (const c of [
      'bench',
      'sessions',
      'show',
      'verify',
      'compact',
      'export',
      'import',
      'copy',
      'expire',
      'retention',
      'erase-user',
      'migrate',
    ])
      expect(run.stdout).to.match(new RegExp(`^  ${c} `, 'm'));
  });

  it("sessions list --user shows only that user's sessions", async function () {
    const run = await runCli('sessions', 'list', '--url', `sqlite:${store()}`, '--user', 'alice', '--json');
    expect(run.code).to.equal(0);
    const ids = json<{ sessions: { id: string; userId: string; version: number }[] }>(run).sessions;
    expect(ids.map((s) => s.id).sort()).to.deep.equal(['fixture-plain', 'fixture-tools']);
    expect(ids.every((s) => s.userId === 'alice')).to.equal(true);
  });

  it('sessions list without --user lists every session of the store', async function () {
    const run = await runCli('sessions', 'list', '--url', `sqlite:${store()}`, '--json');
    expect(json<{ sessions: unknown[] }>(run).sessions).to.have.length(5);
  });

  it('show reports window against archive, summaries with what they cover, and token anatomy', async function () {
    const run = await runCli('show', 'fixture-summary', '--url', `sqlite:${store()}`, '--json');
    expect(run.code).to.equal(0);
    const view = json<{
      version: number;
      events: { total: number; archived: number; active: number };
      summaries: { source: string; covers: number }[];
      tokens: { active: { total: number; summaries: number } };
      log: { preview?: string }[];
    }>(run);
    expect(view.version).to.equal(13);
    expect(view.events).to.include({ total: 14, archived: 8 });
    expect(view.summaries).to.have.length.greaterThan(0);
    expect(view.summaries[0]).to.include({ source: 'additive-summarization', covers: 8 });
    expect(view.tokens.active.summaries).to.be.greaterThan(0);
    expect(view.log[0]!.preview).to.be.a('string');
  });

  it('show --no-content leaves message text out', async function () {
    const run = await runCli('show', 'fixture-plain', '--url', `sqlite:${store()}`, '--json', '--no-content');
    expect(run.stdout).to.not.include('question 1');
  });

  it('show of a missing session exits 1', async function () {
    const run = await runCli('show', 'nope', '--url', `sqlite:${store()}`);
    expect(run.code).to.equal(1);
    expect(run.stderr).to.include('session not found: nope');
  });

  it('verify --all passes on a consistent store', async function () {
    const run = await runCli('verify', '--all', '--url', `sqlite:${store()}`, '--json');
    expect(run.code).to.equal(0);
    expect(json(run)).to.include({ ok: true, sessions: 5, events: 54, violations: 0 });
  });

  it('verify exits 1 and names the event when a tool result has lost its call', async function () {
    const path = store();
    const repo = new SqliteSessionRepository({ path });
    const orphan = SessionEvent.create({
      sessionId: 'fixture-plain',
      id: 'orphan-1',
      message: Messages.tool([Messages.toolResponse('call-nowhere', 'f', 'data')]),
    });
    await repo.appendEvent(orphan);
    await repo.close();
    const single = await runCli('verify', 'fixture-plain', '--url', `sqlite:${path}`);
    expect(single.code).to.equal(1);
    expect(single.stdout).to.include('VIOLATION fixture-plain orphaned-tool-result').and.include('orphan-1');
    const all = await runCli('verify', '--all', '--url', `sqlite:${path}`, '--json');
    expect(all.code).to.equal(1);
    expect(json<{ results: { sessionId: string }[] }>(all).results.map((r) => r.sessionId)).to.deep.equal(['fixture-plain']);
  });

  it('verify needs a session id or --all', async function () {
    const run = await runCli('verify', '--url', `sqlite:${store()}`);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.include('give either a session id or --all');
  });

  it('compact --dry-run reports what it would archive and writes nothing', async function () {
    const path = store();
    const run = await runCli(
      'compact',
      'fixture-tools',
      '--url',
      `sqlite:${path}`,
      '--strategy',
      'sliding-window',
      '--set',
      'maxEvents=4',
      '--force',
      '--dry-run',
      '--json',
    );
    expect(run.code).to.equal(0);
    const report = json<{ outcome: string; archived: number; before: { events: number }; after: { events: number } }>(run);
    expect(report.outcome).to.equal('dry-run');
    expect(report.archived).to.be.greaterThan(0);
    expect(report.after.events).to.be.lessThan(report.before.events);
    const repo = new SqliteSessionRepository({ path });
    expect(await repo.getEventVersion('fixture-tools')).to.equal(19);
    await repo.close();
  });

  it('compact commits and the archived events are still in the log', async function () {
    const path = store();
    const run = await runCli(
      'compact',
      'fixture-tools',
      '--url',
      `sqlite:${path}`,
      '--strategy',
      'sliding-window',
      '--set',
      'maxEvents=4',
      '--force',
      '--json',
    );
    const report = json<{ outcome: string; archived: number; after: { events: number } }>(run);
    expect(report.outcome).to.equal('committed');
    const repo = new SqliteSessionRepository({ path });
    expect(await repo.getEventVersion('fixture-tools')).to.equal(20);
    expect(await repo.findEvents('fixture-tools', EventFilter.active())).to.have.length(report.after.events);
    expect(await repo.findEvents('fixture-tools')).to.have.length(22);
    await repo.close();
  });

  it('compact without --force follows the strategy’s trigger and leaves a small session alone', async function () {
    const run = await runCli('compact', 'fixture-plain', '--url', `sqlite:${store()}`, '--strategy', 'turn-window', '--json');
    expect(json(run)).to.include({ outcome: 'not-triggered', archived: 0 });
  });

  it('compact --profile pressure-bands --dry-run reports each band that ran, with tokens before and after', async function () {
    const path = store();
    const run = await runCli(
      'compact',
      'fixture-tools',
      '--url',
      `sqlite:${path}`,
      '--profile',
      'pressure-bands',
      '--budget',
      '300',
      '--dry-run',
      '--json',
    );
    expect(run.code, run.stderr).to.equal(0);
    const report = json<{
      outcome: string;
      profile: string;
      stages: { name: string; tokensBefore: number; tokensAfter: number }[];
    }>(run);
    expect(report).to.include({ outcome: 'dry-run', profile: 'pressure-bands' });
    expect(report.stages.map((s) => s.name)).to.deep.equal(['mask', 'strip', 'summarize']);
    expect(report.stages.at(-1)!.tokensAfter).to.be.lessThan(report.stages[0]!.tokensBefore);
    const repo = new SqliteSessionRepository({ path });
    expect(await repo.getEventVersion('fixture-tools')).to.equal(19);
    await repo.close();
  });

  it('compact --profile NAME --config FILE uses the file’s profile and window, and commits without --dry-run', async function () {
    const path = store();
    const config = join(dir, `profiles-${n++}.yaml`);
    writeFileSync(
      config,
      'contextWindowTokens: 8000\nprofiles:\n  short:\n    use: sliding-window\n    options: { maxEvents: 4 }\n',
    );
    const run = await runCli(
      'compact',
      'fixture-tools',
      '--url',
      `sqlite:${path}`,
      '--profile',
      'short',
      '--config',
      config,
      '--force',
      '--json',
    );
    expect(run.code, run.stderr).to.equal(0);
    const report = json<{ outcome: string; after: { events: number } }>(run);
    expect(report.outcome).to.equal('committed');
    const repo = new SqliteSessionRepository({ path });
    expect(await repo.findEvents('fixture-tools', EventFilter.active())).to.have.length(report.after.events);
    await repo.close();
  });

  it('compact refuses both or neither of --strategy and --profile, an unknown profile and a bad configuration', async function () {
    const url = `sqlite:${store()}`;
    expect((await runCli('compact', 'fixture-tools', '--url', url)).stderr).to.include('give either --strategy or --profile');
    const both = await runCli('compact', 'fixture-tools', '--url', url, '--strategy', 'sliding-window', '--profile', 'recursive');
    expect(both.stderr).to.include('give either --strategy or --profile');
    const unknown = await runCli('compact', 'fixture-tools', '--url', url, '--profile', 'heavy');
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.include("Unknown compaction profile 'heavy'");
    const bad = join(dir, `bad-${n++}.yaml`);
    writeFileSync(bad, 'profiles:\n  p: { use: recursive, trigger: { thresholdRatio: high } }\n');
    const invalid = await runCli('compact', 'fixture-tools', '--url', url, '--profile', 'p', '--config', bad);
    expect(invalid.stderr).to.include('profiles.p.trigger.thresholdRatio: expected a number in (0, 1], got "high"');
  });

  it('export then import into an empty store gives the same logs; a second import changes nothing', async function () {
    const source = store();
    const file = join(dir, 'export.jsonl');
    const exported = await runCli('export', '--url', `sqlite:${source}`, '--out', file, '--json');
    expect(json(exported)).to.include({ sessions: 5, events: 54 });
    expect(readFileSync(file, 'utf8').trim().split('\n')).to.have.length(5);
    const target = join(dir, `imported-${n++}.db`);
    const first = await runCli('import', '--url', `sqlite:${target}`, '--in', file, '--json');
    expect(json(first)).to.include({ written: 5, eventsAppended: 54 });
    const again = await runCli('import', '--url', `sqlite:${target}`, '--in', file, '--json');
    expect(json(again)).to.include({ written: 0, unchanged: 5, eventsAppended: 0 });
    const compare = await runCli('copy', '--from', `sqlite:${source}`, '--to', `sqlite:${target}`, '--json');
    expect(json(compare)).to.include({ ok: true, unchanged: 5, eventsAppended: 0 });
  });

  it('export --resume completes a file a killed export left with a half-written line', async function () {
    const source = store();
    const full = join(dir, 'full.jsonl');
    await runCli('export', '--url', `sqlite:${source}`, '--out', full);
    const lines = readFileSync(full, 'utf8').split('\n');
    const partial = join(dir, 'partial.jsonl');
    writeFileSync(partial, `${lines[0]}\n${lines[1]}\n${lines[2]!.slice(0, 40)}`);
    const refused = await runCli('export', '--url', `sqlite:${source}`, '--out', partial);
    expect(refused.code).to.equal(2);
    const resumed = await runCli('export', '--url', `sqlite:${source}`, '--out', partial, '--resume', '--json');
    expect(json(resumed)).to.include({ sessions: 3, skipped: 2 });
    const ids = readFileSync(partial, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { sessionId: string }).sessionId);
    expect(ids.sort()).to.deep.equal(['fixture-expired', 'fixture-forever', 'fixture-plain', 'fixture-summary', 'fixture-tools']);
  });

  it('import reports a malformed line with its number and exits 1, importing the rest', async function () {
    const file = join(dir, 'bad.jsonl');
    writeFileSync(
      file,
      `{"sessionId":"ok-1","events":[{"role":"user","content":"hi"}]}\nnot json\n{"sessionId":"ok-2","events":[]}\n`,
    );
    const run = await runCli('import', '--url', `sqlite:${join(dir, `bad-${n++}.db`)}`, '--in', file, '--json');
    expect(run.code).to.equal(1);
    const report = json<{ written: number; failures: { line: number }[] }>(run);
    expect(report.written).to.equal(2);
    expect(report.failures.map((f) => f.line)).to.deep.equal([2]);
  });

  it('expire --before that is not an ISO-8601 time (a bare number) exits 2, names it and deletes nothing', async function () {
    const path = store();
    const run = await runCli('expire', '--url', `sqlite:${path}`, '--before', '2030');
    expect(run.code).to.equal(2);
    expect(run.stderr).to.include("--before must be an ISO-8601 date or date-time such as 2025-06-01T12:00:00Z (got '2030')");
    const repo = new SqliteSessionRepository({ path });
    expect(await repo.findById('fixture-expired')).to.not.equal(null);
    await repo.close();
  });

  it('expire --dry-run lists expired sessions; expire deletes them', async function () {
    const path = store();
    const dry = await runCli('expire', '--url', `sqlite:${path}`, '--before', '2025-01-01T00:00:00Z', '--dry-run', '--json');
    expect(json(dry)).to.deep.include({ expired: 1, sessionIds: ['fixture-expired'] });
    const real = await runCli('expire', '--url', `sqlite:${path}`, '--before', '2025-01-01T00:00:00Z', '--json');
    expect(json(real)).to.include({ expired: 1 });
    const repo = new SqliteSessionRepository({ path });
    expect(await repo.findById('fixture-expired')).to.equal(null);
    expect(await repo.findById('fixture-forever')).to.not.equal(null);
    await repo.close();
  });

  it('expire on a migrated store tombstones what it deletes: the id cannot be created again', async function () {
    const path = store();
    expect((await runCli('migrate', '--url', `sqlite:${path}`)).code).to.equal(0);
    const real = await runCli('expire', '--url', `sqlite:${path}`, '--before', '2025-01-01T00:00:00Z', '--json');
    expect(json(real)).to.include({ expired: 1, tombstones: true });
    const repo = new SqliteSessionRepository({ path });
    try {
      expect(await repo.findTombstone('fixture-expired')).to.not.equal(null);
      const again = new DefaultSessionService(repo);
      const refused = await again.create({ userId: 'someone', id: 'fixture-expired' }).catch((e: Error) => e);
      expect(refused).to.be.instanceOf(IllegalStateError);
    } finally {
      await repo.close();
    }
  });

  it('migrate --dry-run prints pending steps of a new file and leaves no file behind; migrate creates and applies them', async function () {
    const path = join(dir, `fresh-${n++}.db`);
    const dry = await runCli('migrate', '--url', `sqlite:${path}`, '--dry-run');
    expect(dry.code).to.equal(0);
    expect(dry.stdout).to.include('pending 1 sessions and events').and.include('CREATE TABLE session_compaction_sessions');
    expect(existsSync(path)).to.equal(false);
    const real = await runCli('migrate', '--url', `sqlite:${path}`, '--json');
    expect(json<{ appliedNow: number[] }>(real).appliedNow[0]).to.equal(1);
    const again = await runCli('migrate', '--url', `sqlite:${path}`, '--json');
    expect(json<{ appliedNow: number[]; pending: unknown[] }>(again)).to.deep.include({ appliedNow: [], pending: [] });
  });

  it('no command asked to read or change a store creates a missing SQLite file; each names the migrate command', async function () {
    const missing = join(dir, 'missing.db');
    const url = `sqlite:${missing}`;
    const commands = [
      ['sessions', 'list'],
      ['show', 'x'],
      ['verify', '--all'],
      ['export', '--out', join(dir, 'missing.jsonl')],
      ['compact', 'x', '--strategy', 'sliding-window', '--dry-run'],
      ['expire', '--dry-run'],
      ['retention', '--archived-older-than', '30d'],
      ['erase-user', 'alice', '--dry-run'],
    ];
    for (const command of commands) {
      const run = await runCli(...command, '--url', url);
      expect(run.code, command.join(' ')).to.equal(2);
      expect(run.stderr).to.include(`no SQLite store at ${missing} (nothing was created)`);
      expect(run.stderr).to.include(`\`session-compaction migrate --url ${url}\``);
      expect(existsSync(missing), command.join(' ')).to.equal(false);
    }
    const copy = await runCli('copy', '--from', url, '--to', `sqlite:${join(dir, 'copy-target.db')}`);
    expect(copy.code).to.equal(2);
    expect(copy.stderr).to.include(`no SQLite store at ${missing}`);
    expect(existsSync(missing)).to.equal(false);
  });

  it('a store without a schema is refused before the command runs, naming the migrate command, not the API', async function () {
    const empty = join(dir, `empty-${n++}.db`);
    new Database(empty).close();
    const run = await runCli('sessions', 'list', '--url', `sqlite:${empty}`, '--prefix', 'tenant');
    expect(run.code).to.equal(2);
    expect(run.stderr).to.include(
      `holds no session-compaction schema (a store not created yet, or another --prefix): run \`session-compaction migrate --url sqlite:${empty} --prefix tenant\``,
    );
    expect(run.stderr).to.not.include('initializeSchema');
    const raw = new Database(empty, { readonly: true });
    expect(raw.prepare('SELECT count(*) AS n FROM sqlite_master').get()).to.deep.equal({ n: 0 });
    raw.close();
  });

  it('an unsupported URL is an error with exit code 2', async function () {
    const run = await runCli('verify', '--all', '--url', 'mysql://x/y');
    expect(run.code).to.equal(2);
    expect(run.stderr).to.include('unsupported --url');
    expect(existsSync('mysql:')).to.equal(false);
  });
});
