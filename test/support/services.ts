/**
 * Tests that need PostgreSQL, Redis or the recorded data skip with a visible reason when it is missing,
 * except under CI=true or REQUIRE_SERVICES=1, where a missing service is a failure.
 */
export const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A table / key prefix no other run uses, so parallel runs on one server never collide. */
export function freshServicePrefix(): string {
  return `t_${Date.now().toString(36)}_${Math.random().toString(16).slice(2, 10)}`;
}

export function servicesRequired(): boolean {
  return process.env.CI === 'true' || process.env.REQUIRE_SERVICES === '1';
}

const g = globalThis as { __sessionCompactionSkipReasons?: string[] };

/** Records a skip reason (printed at the end of the run by the reporter) and skips the suite. */
export function skipWithReason(ctx: Mocha.Context, reason: string): void {
  (g.__sessionCompactionSkipReasons ??= []).push(reason);
  console.warn(`  ⚠ skipped: ${reason}`);
  ctx.skip();
}

/** In a `before` hook: skip the suite when `probe` fails, or fail it when services are required. */
export async function requireService(ctx: Mocha.Context, name: string, probe: () => Promise<void>): Promise<void> {
  try {
    await probe();
  } catch (error) {
    const reason = `${name} unreachable (${(error as Error).message})`;
    if (servicesRequired()) throw new Error(`${reason}; CI=true or REQUIRE_SERVICES=1 requires it`, { cause: error });
    skipWithReason(ctx, reason);
  }
}
