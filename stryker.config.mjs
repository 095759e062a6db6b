// Mutation testing of the core (see CONTRIBUTING.md, "Mutation testing"): `npm run mutation`.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const mocha12 = fileURLToPath(new URL('./scripts/stryker/mocha12.cjs', import.meta.url));
createRequire(import.meta.url)(mocha12);
// Stryker's child processes (its test runners) inherit the environment.
process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --require ${mocha12}`.trim();
// tsx reads tsconfig.json once, from the directory a process starts in, and applies it only to the files it
// includes. Stryker's workers start in the project and then move into the sandbox (.stryker-tmp/sandbox-*),
// whose copies tsconfig.json does not include: without this one they would compile without `strict`, so a
// test would run in sloppy mode (an assignment to a frozen object would not throw).
process.env.TSX_TSCONFIG_PATH = fileURLToPath(new URL('./scripts/stryker/tsconfig.json', import.meta.url));

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: [
    'src/compaction/**/*.ts',
    'src/session/**/*.ts',
    'src/filter/**/*.ts',
    'src/recall/ContextAssembler.ts',
    'src/recall/fitToBudget.ts',
    'src/repository/eventCodec.ts',
  ],
  testRunner: 'mocha',
  // Stryker runs mocha inside its own worker processes, so .mocharc.json's node-option does not apply: the
  // workers get tsx and the condition under which the package's self-reference ('session-compaction')
  // resolves to the sources, which in Stryker's sandbox are the mutated copies.
  testRunnerNodeArgs: ['--import', 'tsx', '--conditions=session-compaction-source'],
  mochaOptions: {
    config: '.mocharc.json',
    // The unit and property tests of the mutated code only: no database, multi-process, service or provider
    // suites (they would cover the same code again, many times slower per mutant).
    spec: [
      'test/compaction/**/*.test.ts',
      // The summarising strategies' ledger, preview and no-event-loss tests (in-memory service, no database).
      'test/summarization/noEventLoss.test.ts',
      'test/summarization/ledgerAndQualityGate.test.ts',
      'test/summarization/previewAndCutWithinTurn.test.ts',
      'test/session/**/*.test.ts',
      'test/filter/**/*.test.ts',
      'test/recall/ContextAssembler*.test.ts',
      'test/recall/fitToBudget*.test.ts',
      'test/repository/eventCodec*.test.ts',
      'test/properties/strategies.property.test.ts',
    ],
  },
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  concurrency: 2,
  timeoutMS: 10000,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  tempDirName: '.stryker-tmp',
  // Only what the tests need is copied into the sandbox: the test support reads benchmarks/src (the recorded
  // session loaders), not the benchmark results.
  ignorePatterns: ['dist', 'docs', 'benchmarks/results', 'benchmarks/data', 'bench-results', 'coverage', 'reports', 'etc', '.ci'],
  thresholds: { high: 90, low: 80, break: null },
};
