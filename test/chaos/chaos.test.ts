/**
 * The short chaos run of the test suite: a few seconds per durable backend (`npm run chaos` runs it for as
 * long as asked). See chaosRun.ts for what the processes do and what the history checker proves.
 */
import { expect } from 'chai';
import { probePostgres } from '../support/postgres.js';
import { probeRedis } from '../support/redis.js';
import { requireService } from '../support/services.js';
import { describeChaos, runChaos, type ChaosOptions } from './chaosRun.js';
import { chaosStore } from './chaosStores.js';

const SECONDS = Number(process.env.CHAOS_SECONDS ?? 4);

describe('chaos: 8 processes appending, compacting, reverting, redacting, purging, forking, erasing and importing', function () {
  this.timeout(180_000);
  const probes: Record<ChaosOptions['backend'], (() => Promise<void>) | undefined> = {
    sqlite: undefined,
    postgres: probePostgres,
    redis: probeRedis,
  };
  for (const backend of ['sqlite', 'postgres', 'redis'] as const) {
    it(`${backend}: SIGKILLs and connection kills, and the history checker finds no violation`, async function () {
      const probe = probes[backend];
      if (probe !== undefined) await requireService(this, backend, probe);
      const store = await chaosStore(backend);
      try {
        const report = await runChaos({ ...store, seconds: SECONDS, killEveryMs: 1500 });
        console.log(`      ${describeChaos(report)}`);
        expect(report.violations).to.deep.equal([]);
        expect(report.acknowledgedAppends, 'the processes did real work').to.be.greaterThan(20);
      } finally {
        await store.dispose();
      }
    });
  }
});
