// Mocha's spec reporter plus one closing line in the plain 'N passed, N failed, N skipped' form that CI
// tooling reads, and a list of every skipped suite's reason so that skips are never silent.
'use strict';
const Mocha = require('mocha');
const { Spec } = Mocha.reporters;
const { EVENT_RUN_END } = Mocha.Runner.constants;

class SummaryReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    let ended = false;
    // A test awaiting a promise nothing will settle lets the event loop drain, and Node then exits with code 0
    // in the middle of the run: every later test silently unrun, CI green. Such an exit is a failure.
    process.once('exit', (code) => {
      if (ended || code !== 0) return;
      process.stdout.write('mocha: the process exited before the run ended (a test awaited a promise nothing settles)\n');
      process.exitCode = 1;
    });
    runner.once(EVENT_RUN_END, () => {
      ended = true;
      const s = runner.stats ?? {};
      const reasons = globalThis.__sessionCompactionSkipReasons ?? [];
      for (const r of reasons) process.stdout.write(`SKIPPED: ${r}\n`);
      process.stdout.write(`mocha: ${s.passes ?? 0} passed, ${s.failures ?? 0} failed, ${s.pending ?? 0} skipped\n`);
    });
  }
}
module.exports = SummaryReporter;
