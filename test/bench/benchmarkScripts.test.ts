import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { headerComment } from '../../benchmarks/support/args.js';

const BENCHMARKS = fileURLToPath(new URL('../../benchmarks/', import.meta.url));
const RUNNER = fileURLToPath(new URL('../support/benchmarkHelpRunner.ts', import.meta.url));
const scripts = readdirSync(BENCHMARKS)
  .filter((f) => f.endsWith('.ts'))
  .sort()
  .map((f) => path.join(BENCHMARKS, f));

interface HelpOutcome {
  file: string;
  printed: string;
  exitCode?: number;
  error?: string;
}

describe('bench: the benchmark scripts', function () {
  this.timeout(90_000);
  let outcomes: Map<string, HelpOutcome>;

  before(async () => {
    // Every script's imports resolve and link, as `node --import tsx <script>` loads them (a renamed export fails here).
    // A script that ignores --help starts its benchmark: the runner is then killed at the timeout, and that script
    // and the ones after it have no outcome.
    const stdout = await promisify(execFile)(
      process.execPath,
      ['--conditions=session-compaction-source', '--import', 'tsx', RUNNER, ...scripts],
      { maxBuffer: 16 * 1024 * 1024, timeout: 60_000 },
    ).then(
      (done) => done.stdout,
      (error: { stdout?: string }) => error.stdout ?? '',
    );
    const lines = stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as HelpOutcome);
    outcomes = new Map(lines.map((o) => [o.file, o]));
  });

  it('every script is listed in benchmarks/README.md, so a reader finds what each one measures', () => {
    const readme = readFileSync(path.join(BENCHMARKS, 'README.md'), 'utf8');
    const unlisted = scripts.map((f) => path.basename(f)).filter((name) => !readme.includes(`| \`${name}\``));
    expect(unlisted).to.deep.equal([]);
  });

  for (const file of scripts) {
    it(`${path.basename(file)} --help prints its header comment, naming the script, and exits 0 before any work`, () => {
      const outcome = outcomes.get(file);
      expect(outcome, 'no outcome: this script or one before it did not exit on --help').to.not.equal(undefined);
      expect(outcome!.error).to.equal(undefined);
      expect(outcome!.exitCode).to.equal(0);
      const header = headerComment(readFileSync(file, 'utf8'));
      expect(outcome!.printed).to.equal(header);
      expect(header).to.include(`benchmarks/${path.basename(file)}`);
    });
  }
});
