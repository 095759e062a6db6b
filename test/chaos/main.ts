/**
 * `npm run chaos -- --seconds 60 --backend sqlite [--runs 3] [--processes 8]`: the chaos run (chaosRun.ts) on
 * a fresh store of each backend asked for (`--backend all` for the three), one after the other. Prints one
 * line per run and every violation; exits with 1 when any run found one.
 */
import { parseArgs } from 'node:util';
import { describeChaos, runChaos, type ChaosOptions } from './chaosRun.js';
import { chaosStore } from './chaosStores.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    backend: { type: 'string', default: 'all' },
    runs: { type: 'string', default: '1' },
    processes: { type: 'string', default: '8' },
  },
});
const backends: ChaosOptions['backend'][] =
  values.backend === 'all' ? ['sqlite', 'postgres', 'redis'] : [values.backend as ChaosOptions['backend']];
let failed = false;
for (const backend of backends) {
  for (let run = 1; run <= Number(values.runs); run++) {
    const store = await chaosStore(backend);
    try {
      const started = Date.now();
      const report = await runChaos({ ...store, seconds: Number(values.seconds), processes: Number(values.processes) });
      process.stdout.write(`run ${run}: ${describeChaos(report)} (${((Date.now() - started) / 1000).toFixed(0)} s in all)\n`);
      process.stdout.write(`  errors (documented kinds): ${JSON.stringify(report.errors)}\n`);
      for (const v of report.violations) process.stdout.write(`  VIOLATION ${v}\n`);
      if (report.violations.length > 0) failed = true;
    } finally {
      await store.dispose();
    }
  }
}
process.exit(failed ? 1 : 0);
