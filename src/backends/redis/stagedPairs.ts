import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RedisConnections } from './RedisConnections.js';
import { RedisScript } from './RedisScript.js';
import { STAGE_SCRIPT } from './scripts.js';

/**
 * How many (id, value) pairs one script call carries. A write with more is staged in calls of this size and
 * committed by one small call (PAIRS in scripts.ts), so no call grows with the window: one call holding every
 * event of a 100,000-event window overflowed the stack. Internal, not an option: tests lower it to exercise
 * staging on small windows.
 */
export const SCRIPT_BATCH = { pairs: 5_000 };

/** A stage whose commit never came (the process died) expires by itself. */
const STAGE_TTL_MS = 10 * 60_000;

const STAGE = new RedisScript(STAGE_SCRIPT);

/** The pairs of one write as its commit script takes them. */
export interface ScriptPairs {
  /** The stage hash (same hash tag as the session); declared even when unused, as a script's keys must be. */
  stageKey: string;
  /** '' when the pairs are inline, else how many were staged. */
  staged: string;
  /** The inline pairs, flat: id, value, id, value … (empty when staged). */
  inline: string[];
}

/**
 * Runs `commit` with `pairs` (flat id, value …) inline when they fit in one call, or staged first in bounded
 * calls. Each staging call is idempotent (a position is written once, whatever is re-sent), so it is retried
 * like a read; the commit script stays the one atomic step, with its own compare-and-set. The stage is removed
 * once the commit has answered (a re-sent commit may still read it until then).
 */
export async function withScriptPairs<T>(
  client: Redis,
  connections: RedisConnections,
  sessionKeyBase: string,
  operation: string,
  pairs: readonly string[],
  commit: (pairs: ScriptPairs) => Promise<T>,
): Promise<T> {
  const stageKey = `${sessionKeyBase}:stage:${randomUUID()}`;
  const count = pairs.length / 2;
  const batch = Math.max(1, SCRIPT_BATCH.pairs);
  if (count <= batch) return commit({ stageKey, staged: '', inline: [...pairs] });
  try {
    for (let first = 0; first < count; first += batch) {
      const args: (string | number)[] = [STAGE_TTL_MS];
      for (let k = first; k < Math.min(count, first + batch); k++) {
        const id = pairs[2 * k]!;
        args.push(k + 1, `${Buffer.byteLength(id)}:${id}${pairs[2 * k + 1]!}`);
      }
      await connections.idempotent(`${operation} (staging)`, () => STAGE.run(client, [stageKey], args));
    }
    return await commit({ stageKey, staged: String(count), inline: [] });
  } finally {
    await client.unlink(stageKey).catch(() => undefined);
  }
}
