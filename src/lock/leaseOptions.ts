import { InvalidArgumentError } from '../errors.js';
import type { CompactionLockAcquireOptions } from './CompactionLock.js';

/** Shortest accepted lease: below it a renewal could not reliably arrive in time. */
export const MIN_LEASE_MS = 50;

export function requireLeaseMs(leaseMs: unknown): number {
  if (typeof leaseMs !== 'number' || !Number.isInteger(leaseMs) || leaseMs < MIN_LEASE_MS || leaseMs > 2 ** 31 - 1) {
    throw new InvalidArgumentError(`leaseMs must be an integer from ${MIN_LEASE_MS} to 2147483647 (got ${String(leaseMs)})`);
  }
  return leaseMs;
}

export function requireWaitMs(waitMs: unknown): number {
  if (waitMs === undefined) return 0;
  if (typeof waitMs !== 'number' || !Number.isInteger(waitMs) || waitMs < 0 || waitMs > 2 ** 31 - 1) {
    throw new InvalidArgumentError(`waitMs must be an integer from 0 to 2147483647 (got ${String(waitMs)})`);
  }
  return waitMs;
}

export function requireAcquireOptions(options: CompactionLockAcquireOptions): { leaseMs: number; waitMs: number } {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('acquire options must be an object');
  return { leaseMs: requireLeaseMs(options.leaseMs), waitMs: requireWaitMs(options.waitMs) };
}
