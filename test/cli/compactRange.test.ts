/**
 * `session-compaction compact` limited to part of the active window (--from/--to, --since/--until,
 * --older-than, --snap), through the CLI's entry point on a real SQLite store.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultSessionService, EventFilter, Messages, SessionEvent } from 'session-compaction';
import { SqliteSessionRepository } from 'session-compaction/sqlite';
import { silentLogger } from '../summarization/support.js';
import { json, runCli } from './support/runCli.js';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

interface RangeReport {
  outcome: string;
  archived: number;
  archivedIds: string[];
  range: { requested: Record<string, unknown>; resolved: { fromEventId: string; toEventId: string } | null } | null;
}

/** What a prompt is built from, per event: id, text, archived flag. */
const snapshot = (events: readonly SessionEvent[]) => events.map((e) => ({ id: e.id, text: e.text, archived: e.archived }));

describe('cli: compact with a range', function () {
  this.timeout(30_000);
  let dir: string;
  let n = 0;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'cli-range-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * A store holding one session: a system message, then `turns` question/answer turns, turn i at `start + i`
   * days (the answer a minute after its question). Returns the store's path, the session id and its window.
   */
  async function store(turns: number, start: number) {
    const path = join(dir, `store-${n++}.db`);
    const repository = new SqliteSessionRepository({ path });
    let clock = start;
    const service = new DefaultSessionService(repository, { logger: silentLogger, now: () => new Date(clock) });
    const { id } = await service.create({ userId: 'alice' });
    await service.appendMessage(id, Messages.system('Be brief.'));
    for (let i = 0; i < turns; i++) {
      clock = start + i * DAY;
      await service.appendMessage(id, Messages.user(`question ${i}`));
      clock += 60_000;
      await service.appendMessage(id, Messages.assistant(`answer ${i}`));
    }
    const window = await repository.findEvents(id, EventFilter.active());
    await repository.close();
    return { url: `sqlite:${path}`, path, id, window };
  }

  async function read(path: string, id: string) {
    const repository = new SqliteSessionRepository({ path });
    try {
      return { log: await repository.findEvents(id), version: await repository.getEventVersion(id) };
    } finally {
      await repository.close();
    }
  }

  const compact = (url: string, id: string, ...flags: string[]) =>
    runCli('compact', id, '--url', url, '--strategy', 'sliding-window', '--set', 'maxEvents=2', '--force', ...flags);

  it('--from/--to archives only inside the range, widened to whole turns; every event outside it stays active and unchanged', async function () {
    const { url, path, id, window } = await store(6, Date.parse('2025-06-01T00:00:00Z'));
    // window: [system, q0, a0, q1, a1, …, q5, a5]; from a1 (turn 1) to q3 (turn 3) widens to q1 … a3.
    const run = await compact(url, id, '--from', window[4]!.id, '--to', window[7]!.id, '--json');
    expect(run.code, run.stderr).to.equal(0);
    const report = json<RangeReport>(run);
    expect(report.outcome).to.equal('committed');
    expect(report.range).to.deep.equal({
      requested: { fromEventId: window[4]!.id, toEventId: window[7]!.id, snap: 'turn' },
      resolved: { fromEventId: window[3]!.id, toEventId: window[8]!.id },
    });
    // maxEvents=2 inside the range: turns 1 and 2 go, turn 3 stays.
    expect(report.archivedIds).to.deep.equal(window.slice(3, 7).map((e) => e.id));
    const { log } = await read(path, id);
    const byId = new Map(log.map((e) => [e.id, e]));
    const outside = [...window.slice(0, 3), ...window.slice(7)];
    expect(snapshot(outside.map((e) => byId.get(e.id)!))).to.deep.equal(snapshot(outside));
    expect(log.filter((e) => e.archived).map((e) => e.id)).to.deep.equal(report.archivedIds);
  });

  it('--since/--until archives only the turns whose events fall in the time range', async function () {
    const start = Date.parse('2025-06-01T00:00:00Z');
    const { url, path, id, window } = await store(6, start);
    // Turns 2 to 4: from turn 2's question to turn 4's answer.
    const since = new Date(start + 2 * DAY).toISOString();
    const until = new Date(start + 4 * DAY + 60_000).toISOString();
    const report = json<RangeReport>(await compact(url, id, '--since', since, '--until', until, '--json'));
    expect(report.outcome).to.equal('committed');
    expect(report.range).to.deep.equal({
      requested: { since, until, snap: 'turn' },
      resolved: { fromEventId: window[5]!.id, toEventId: window[10]!.id },
    });
    expect(report.archivedIds).to.deep.equal(window.slice(5, 9).map((e) => e.id));
    const active = (await read(path, id)).log.filter((e) => !e.archived).map((e) => e.id);
    expect(active).to.deep.equal([...window.slice(0, 5), ...window.slice(9)].map((e) => e.id));
  });

  it('--older-than archives only among the events older than the duration', async function () {
    // Turn i is 6 - i days old: older than 84h (3.5 days) are turns 0 to 2, and the system message before them.
    const { url, path, id, window } = await store(6, Date.now() - 6 * DAY);
    const report = json<RangeReport>(await compact(url, id, '--older-than', '84h', '--json'));
    expect(report.outcome).to.equal('committed');
    expect(report.range!.requested).to.deep.equal({ olderThanMs: 84 * HOUR, snap: 'turn' });
    expect(report.range!.resolved).to.deep.equal({ fromEventId: window[0]!.id, toEventId: window[6]!.id });
    expect(report.archivedIds).to.deep.equal(window.slice(0, 5).map((e) => e.id));
    const active = (await read(path, id)).log.filter((e) => !e.archived).map((e) => e.id);
    expect(active).to.deep.equal(window.slice(5).map((e) => e.id));
  });

  it('--dry-run with a range reports the resolved bounds and what it would archive, and writes nothing', async function () {
    const { url, path, id, window } = await store(6, Date.parse('2025-06-01T00:00:00Z'));
    const before = await read(path, id);
    const run = await compact(url, id, '--from', window[3]!.id, '--to', window[8]!.id, '--dry-run', '--json');
    expect(run.code, run.stderr).to.equal(0);
    const report = json<RangeReport>(run);
    expect(report.outcome).to.equal('dry-run');
    expect(report.range!.resolved).to.deep.equal({ fromEventId: window[3]!.id, toEventId: window[8]!.id });
    expect(report.archivedIds).to.deep.equal(window.slice(3, 7).map((e) => e.id));
    const after = await read(path, id);
    expect(after.version).to.equal(before.version);
    expect(snapshot(after.log)).to.deep.equal(snapshot(before.log));
  });

  it('the text report names the range asked for and the first and last event it resolved to', async function () {
    const { url, id, window } = await store(4, Date.parse('2025-06-01T00:00:00Z'));
    const run = await compact(url, id, '--from', window[4]!.id, '--to', window[5]!.id, '--dry-run');
    expect(run.stdout).to.include(
      `range --from ${window[4]!.id} --to ${window[5]!.id}, snap turn → ${window[3]!.id} … ${window[6]!.id}\n`,
    );
  });

  it('a time range that selects no event is reported as empty-range, and nothing is written', async function () {
    const { url, path, id } = await store(3, Date.parse('2025-06-01T00:00:00Z'));
    const before = await read(path, id);
    const run = await compact(url, id, '--since', '2030-01-01T00:00:00Z');
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.include(': empty-range\n').and.include('→ no active event in it');
    expect((await read(path, id)).version).to.equal(before.version);
  });

  it("--snap tool-pair widens only to the tool pair inside one long agent turn ('turn' would take the whole turn)", async function () {
    const path = join(dir, `store-${n++}.db`);
    const repository = new SqliteSessionRepository({ path });
    const service = new DefaultSessionService(repository, { logger: silentLogger });
    const { id } = await service.create({ userId: 'alice' });
    const task = await service.appendMessage(id, Messages.user('the task'));
    const steps: SessionEvent[] = [];
    for (let i = 0; i < 4; i++) {
      const call = { id: `c${i}`, type: 'function' as const, name: 'run', arguments: `{"i":${i}}` };
      steps.push(await service.appendMessage(id, Messages.assistant(null, { toolCalls: [call] })));
      steps.push(await service.appendMessage(id, Messages.tool([{ id: `c${i}`, name: 'run', responseData: `out ${i}` }])));
    }
    await repository.close();
    // From step 1's result (back to its call) to step 2's call (on to its result).
    const flags = ['--from', steps[3]!.id, '--to', steps[4]!.id, '--dry-run', '--json'];
    const pair = json<RangeReport>(await compact(`sqlite:${path}`, id, ...flags, '--snap', 'tool-pair'));
    expect(pair.range!.resolved).to.deep.equal({ fromEventId: steps[2]!.id, toEventId: steps[5]!.id });
    const turn = json<RangeReport>(await compact(`sqlite:${path}`, id, ...flags));
    expect(turn.range!.resolved).to.deep.equal({ fromEventId: task.id, toEventId: steps[7]!.id });
  });

  it('event ids together with times are refused with the API’s message, and nothing is written', async function () {
    const { url, path, id, window } = await store(3, Date.parse('2025-06-01T00:00:00Z'));
    const before = await read(path, id);
    const run = await compact(url, id, '--from', window[1]!.id, '--since', '2025-06-01T00:00:00Z');
    expect(run.code).to.equal(2);
    expect(run.stderr).to.include('range takes event ids or times, not both');
    expect((await read(path, id)).version).to.equal(before.version);
  });

  it('an event id that is not in the active window is named in the error (exit 2), with and without --dry-run', async function () {
    const { url, id } = await store(3, Date.parse('2025-06-01T00:00:00Z'));
    for (const dryRun of [[], ['--dry-run']]) {
      const run = await compact(url, id, '--from', 'ghost-event', ...dryRun);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('Event not found in the active window: ghost-event');
    }
  });

  it('a --snap other than turn or tool-pair is refused with the API’s message', async function () {
    const { url, id, window } = await store(3, Date.parse('2025-06-01T00:00:00Z'));
    const run = await compact(url, id, '--from', window[1]!.id, '--snap', 'whole');
    expect(run.code).to.equal(2);
    expect(run.stderr).to.include("range.snap must be 'turn' or 'tool-pair'");
  });

  it('a --since or --until that is not an ISO-8601 time is named in the error with the text given', async function () {
    const { url, id } = await store(2, Date.parse('2025-06-01T00:00:00Z'));
    const since = await compact(url, id, '--since', 'yesterday');
    expect(since.code).to.equal(2);
    expect(since.stderr).to.include(
      "--since must be an ISO-8601 date or date-time such as 2025-06-01T12:00:00Z (got 'yesterday')",
    );
    // `new Date('12')` is December 2001: a bare number is not taken for a date.
    expect((await compact(url, id, '--until', '12')).stderr).to.include('--until must be an ISO-8601 date or date-time');
  });

  it('a --since on a day the calendar does not have is refused, not rolled over into the next month', async function () {
    const { url, id } = await store(2, Date.parse('2025-06-01T00:00:00Z'));
    for (const text of ['2025-02-29', '2025-04-31T10:00:00Z', '2025-13-01']) {
      const run = await compact(url, id, '--since', text);
      expect(run.code, text).to.equal(2);
      expect(run.stderr).to.include(`--since must be an ISO-8601 date or date-time such as 2025-06-01T12:00:00Z (got '${text}')`);
    }
    // A leap day is a day.
    expect((await compact(url, id, '--since', '2024-02-29', '--dry-run')).code).to.equal(0);
  });

  it('an --older-than that is not a duration is refused with the duration parser’s message', async function () {
    const { url, id } = await store(2, Date.parse('2025-06-01T00:00:00Z'));
    const run = await compact(url, id, '--older-than', 'a week');
    expect(run.code).to.equal(2);
    expect(run.stderr).to.include("--older-than must be a duration such as 90d, 12h, 30m or 45s (got 'a week')");
  });
});
