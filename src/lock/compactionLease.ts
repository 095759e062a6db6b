import { InvalidArgumentError } from '../errors.js';
import type { Logger } from '../logging.js';
import { DEFAULT_LEASE_MS, type CompactionLock, type CompactionLockSettings } from './CompactionLock.js';
import { LeaseKeeper } from './LeaseKeeper.js';
import { requireLeaseMs, requireWaitMs } from './leaseOptions.js';

export interface ResolvedLockSettings {
  lock: CompactionLock;
  leaseMs: number;
  waitMs: number;
}

function isLock(value: unknown): value is CompactionLock {
  const v = value as Partial<CompactionLock> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.acquire === 'function' &&
    typeof v.renew === 'function' &&
    typeof v.release === 'function'
  );
}

/** A lock, or `{ lock, leaseMs?, waitMs? }`, checked once at construction. */
export function resolveLockSettings(
  option: CompactionLock | CompactionLockSettings | null | undefined,
): ResolvedLockSettings | null {
  if (option === undefined || option === null) return null;
  if (isLock(option)) return { lock: option, leaseMs: DEFAULT_LEASE_MS, waitMs: 0 };
  if (typeof option !== 'object' || !isLock((option as CompactionLockSettings).lock)) {
    throw new InvalidArgumentError(
      'compactionLock must be a CompactionLock (acquire, renew, release) or { lock, leaseMs?, waitMs? }',
    );
  }
  const settings = option as CompactionLockSettings;
  return {
    lock: settings.lock,
    leaseMs: requireLeaseMs(settings.leaseMs ?? DEFAULT_LEASE_MS),
    waitMs: requireWaitMs(settings.waitMs),
  };
}

/**
 * Runs `work` holding the session's lease, renewed while it runs and released after (also when it throws).
 * `work` gets `held()` to check, right before it commits, that the lease was never lost. When another holder
 * keeps the lease past `waitMs`, `whenHeld` runs instead.
 */
export async function withCompactionLease<T>(
  settings: ResolvedLockSettings,
  sessionId: string,
  logger: Logger,
  work: (held: () => boolean, fencingToken: number) => Promise<T>,
  whenHeld: () => Promise<T>,
): Promise<T> {
  const lease = await settings.lock.acquire(sessionId, { leaseMs: settings.leaseMs, waitMs: settings.waitMs });
  if (lease === null) return whenHeld();
  const keeper = new LeaseKeeper(settings.lock, lease, settings.leaseMs, logger);
  try {
    return await work(() => keeper.held(), keeper.fencingToken);
  } finally {
    await keeper.release();
  }
}
