import { expect } from 'chai';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDefaultContenderRegistry, type StrategyContender } from 'session-compaction-bench';
import { json, runCli } from './support/runCli.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/sqlite-v1.db', import.meta.url));

describe('cli: compact --strategy --set', function () {
  let dir: string;
  let url: string;
  let strategies: StrategyContender[];
  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'cli-set-'));
    copyFileSync(FIXTURE, join(dir, 'store.db'));
    url = `sqlite:${join(dir, 'store.db')}`;
    strategies = (await createDefaultContenderRegistry()).list().filter((c): c is StrategyContender => c.kind === 'strategy');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const dryRun = (strategy: string, ...set: string[]) =>
    runCli(
      'compact',
      'fixture-tools',
      '--url',
      url,
      '--strategy',
      strategy,
      '--dry-run',
      '--force',
      '--json',
      ...set.flatMap((s) => ['--set', s]),
    );

  it('every strategy refuses a key it does not read, listing the keys it does', async function () {
    expect(strategies.length).to.be.greaterThan(10);
    for (const strategy of strategies) {
      const run = await dryRun(strategy.name, 'maxEvent=3');
      expect(run.code, `${strategy.name}: ${run.stdout}`).to.equal(2);
      expect(run.stderr).to.include(`unknown option 'maxEvent' for strategy '${strategy.name}'`);
      const known = Object.keys(strategy.options ?? {});
      if (known.length === 0) expect(run.stderr).to.include('(it takes no options)');
      else expect(run.stderr).to.include(`(known: ${known.join(', ')})`);
    }
  });

  it('every strategy with a numeric option says that a non-numeric value is not a number', async function () {
    let checked = 0;
    for (const strategy of strategies) {
      const numeric = Object.entries(strategy.options ?? {}).find(([, kind]) => kind === 'number')?.[0];
      if (numeric === undefined) continue;
      checked++;
      const run = await dryRun(strategy.name, `${numeric}=abc`);
      expect(run.code, strategy.name).to.equal(2);
      expect(run.stderr).to.include(`--set ${numeric}=abc: 'abc' is not a number (${numeric} takes a number)`);
      expect(run.stderr).to.not.include('greater than');
    }
    // Only `none` and `content-policy` (and their recall variants) take no number.
    expect(checked).to.equal(strategies.length - 6);
  });

  it('a value outside the listed choices is refused with the choices', async function () {
    const run = await dryRun('sliding-window', 'cutWithinTurn=sometimes');
    expect(run.code).to.equal(2);
    expect(run.stderr).to.include(
      "option 'cutWithinTurn' of 'sliding-window' must be one of 'agent-safe', 'tool-pair-safe', 'never'",
    );
  });

  it('known keys still reach the strategy, as numbers', async function () {
    type Report = { archived: number; after: { events: number } };
    const wide = json<Report>(await dryRun('sliding-window', 'maxEvents=100'));
    const narrow = json<Report>(await dryRun('sliding-window', 'maxEvents=4'));
    expect(wide.archived).to.equal(0);
    expect(narrow.archived).to.be.greaterThan(0);
    expect(narrow.after.events).to.be.lessThan(wide.after.events);
  });
});
