import { setTimeout as sleep } from 'node:timers/promises';
import type { CompactionLease } from './CompactionLock.js';

const FIRST_DELAY_MS = 10;
const MAX_DELAY_MS = 250;

/**
 * Retries `attempt` until it grants a lease or `waitMs` has passed. The delay doubles up to 250 ms with
 * jitter, so a handful of processes waiting on one session neither hammer the store nor wake in lockstep.
 * `wake`, when given, cuts a delay short (an in-process release).
 */
export async function waitForLease(
  attempt: () => Promise<CompactionLease | null>,
  waitMs: number,
  wake?: () => Promise<void>,
): Promise<CompactionLease | null> {
  const deadline = Date.now() + waitMs;
  let delay = FIRST_DELAY_MS;
  for (;;) {
    const lease = await attempt();
    if (lease !== null) return lease;
    const left = deadline - Date.now();
    if (left <= 0) return null;
    const pause = Math.min(left, delay / 2 + Math.random() * (delay / 2));
    if (wake === undefined) await sleep(pause);
    else {
      const controller = new AbortController();
      await Promise.race([wake(), sleep(pause, undefined, { signal: controller.signal }).catch(() => undefined)]);
      controller.abort();
    }
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  }
}
