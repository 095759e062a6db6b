import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { notRun, QUICK_DURATION } from '../../benchmarks/src/cli.js';
import { defaultOutputDirectory, requireWritableOutputDirectory, runStamp } from '../../benchmarks/src/outputDirectory.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const SAMPLE = join(root, 'benchmarks/data/recorded-sample.json');
/** tsx's loader by absolute URL, so that the CLI also runs with another current directory. */
const TSX = pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href;

/** The session-compaction-bench command, in a child process (it writes to the real stdout), on the sources. */
async function bench(args: string[], options: { blocked?: string[]; cwd?: string } = {}) {
  const loader =
    options.blocked === undefined ? [] : ['--import', pathToFileURL(join(root, 'test/support/loader/blockPackages.mjs')).href];
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--conditions=session-compaction-source', '--import', TSX, ...loader, join(root, 'benchmarks/src/main.ts'), ...args],
      {
        cwd: options.cwd ?? root,
        env: { ...process.env, BLOCKED_PACKAGES: (options.blocked ?? []).join(',') },
        timeout: 240_000,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** A small run on the shipped sample: two of ours and the LangChain peer, one budget, no scaling. */
const SMALL = ['--data', SAMPLE, '--strategies', 'none,sliding-window,langchain-trim', '--budgets', '4000', '--no-scaling'];

describe('bench CLI', function () {
  this.timeout(300_000);
  let dir: string;
  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'bench-cli-'));
  });
  afterEach(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  describe('the output folder', function () {
    it('defaults to a new folder under the current directory named by UTC date and time', function () {
      const now = new Date('2026-11-24T17:30:12Z');
      expect(runStamp(now)).to.equal('2026-11-24T1730');
      expect(defaultOutputDirectory(dir, now)).to.equal(join(dir, 'bench-results', '2026-11-24T1730'));
    });

    it('a second run in the same minute gets a folder of its own', function () {
      const now = new Date('2026-11-24T17:30:12Z');
      mkdirSync(join(dir, 'bench-results', '2026-11-24T1730'), { recursive: true });
      expect(defaultOutputDirectory(dir, now)).to.equal(join(dir, 'bench-results', '2026-11-24T1730-2'));
    });

    it('a folder that already holds files is refused without --force, naming the flag', function () {
      writeFileSync(join(dir, 'results.md'), 'committed results');
      expect(() => requireWritableOutputDirectory(dir, false)).to.throw(/is not empty.*--force/);
      expect(() => requireWritableOutputDirectory(dir, true)).to.not.throw();
    });

    it('an empty or missing folder is accepted', function () {
      expect(() => requireWritableOutputDirectory(dir, false)).to.not.throw();
      expect(() => requireWritableOutputDirectory(join(dir, 'new'), false)).to.not.throw();
    });

    it('end to end: a non-empty --out is left untouched and the run refused before any replay', async function () {
      writeFileSync(join(dir, 'results.md'), 'committed results');
      const result = await bench([...SMALL, '--out', dir]);
      expect(result.code).to.not.equal(0);
      expect(result.stderr).to.match(/is not empty.*--force/);
      expect(readdirSync(dir)).to.deep.equal(['results.md']);
    });

    it('end to end: without --out the run writes into ./bench-results/<date> of the current directory', async function () {
      const result = await bench([...SMALL, '--max-sessions', '1'], { cwd: dir });
      expect(result.code, result.stderr).to.equal(0);
      const [folder, ...others] = readdirSync(join(dir, 'bench-results'));
      expect(others).to.deep.equal([]);
      expect(folder).to.match(/^\d{4}-\d{2}-\d{2}T\d{4}$/);
      expect(existsSync(join(dir, 'bench-results', folder!, 'results.md'))).to.equal(true);
    });
  });

  describe('what stdout shows at the end of a run', function () {
    it('a headline table: one row per contender, the key metrics as columns', async function () {
      const result = await bench([...SMALL, '--max-sessions', '1', '--out', dir]);
      expect(result.code, result.stderr).to.equal(0);
      const lines = result.stdout.split('\n');
      const title = lines.findIndex((l) => l.startsWith('Headline: '));
      expect(title, result.stdout).to.be.at.least(0);
      const header = lines[title + 2]!;
      for (const column of ['contender', 'retention', 'mean tokens sent', 'compression', 'compaction p95 ms']) {
        expect(header).to.include(column);
      }
      const rows = lines.slice(title + 4, lines.indexOf('', title + 4)).map((l) => l.split(/\s+/)[0]);
      expect(rows).to.have.members(['none', 'sliding-window', 'langchain-trim']);
      expect(result.stdout).to.match(/Finished in [\d.]+ s\. Wrote:/);
    });

    it('missing optional peers and chart rendering are listed with the reason and the install command', async function () {
      const result = await bench([...SMALL, '--max-sessions', '1', '--out', dir], {
        blocked: ['@langchain/core', 'vega', 'vega-lite'],
      });
      expect(result.code, result.stderr).to.equal(0);
      const notRunAt = result.stdout.indexOf('Not run:');
      expect(notRunAt, result.stdout).to.be.at.least(0);
      const section = result.stdout.slice(notRunAt);
      expect(section).to.match(/langchain-trim\s+@langchain\/core is not installed.*; install: npm install @langchain\/core/);
      expect(section).to.match(/charts\s+vega\/vega-lite are not installed.*; install: npm install vega vega-lite/);
      // The rest of the run still happened.
      expect(result.stdout).to.include('Headline: ');
    });

    it('lists nothing when everything ran', function () {
      expect(notRun({ skipped: [] }, null)).to.equal('');
    });
  });

  it('session-compaction bench forwards its arguments to session-compaction-bench and its exit code back', async function () {
    const cli = (args: string[]) =>
      run(
        process.execPath,
        ['--conditions=session-compaction-source', '--import', TSX, join(root, 'cli/src/main.ts'), 'bench', ...args],
        {
          cwd: root,
          timeout: 120_000,
        },
      ).then(
        ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
        (e: { code?: number; stdout?: string; stderr?: string }) => ({
          code: e.code ?? 1,
          stdout: e.stdout ?? '',
          stderr: e.stderr ?? '',
        }),
      );
    const [viaCli, direct] = await Promise.all([cli(['--list']), bench(['--list'])]);
    expect(viaCli.code).to.equal(0);
    expect(viaCli.stdout).to.equal(direct.stdout);
    expect(viaCli.stdout).to.match(/^sliding-window +strategy/m);
    const help = await cli(['--help']);
    expect(help.stdout).to.include('Usage: session-compaction-bench');
    const bad = await cli(['--budgets', 'many']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('expected comma-separated positive integers');
  });

  it('--help gives the one measured duration of --quick that docs/benchmarking.md gives', async function () {
    const help = await bench(['--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).to.include(QUICK_DURATION);
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(join(root, 'docs/benchmarking.md'), 'utf8').replace(/\s+/g, ' ')).to.include(QUICK_DURATION);
  });
});
