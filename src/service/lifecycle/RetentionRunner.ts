import { IllegalStateError, InvalidArgumentError } from '../../errors.js';
import { isRetentionRepository, type SessionActivity } from '../../repository/RetentionRepository.js';
import type { DataLifecycleContext } from './DataLifecycleContext.js';
import type { SessionEraser } from './SessionEraser.js';
import {
  emptyErasureReport,
  mergeErasureReports,
  type RetentionOptions,
  type RetentionPolicy,
  type RetentionProgress,
  type RetentionReport,
} from './reports.js';

const DEFAULT_BATCH_SIZE = 500;
const DEFAULT_PAGE_SIZE = 100;

function optionalDuration(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new InvalidArgumentError(`${name} must be a number >= 0`);
  return value;
}

function positiveInt(value: unknown, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0)
    throw new InvalidArgumentError(`${name} must be greater than 0`);
  return value;
}

/** Checks a policy; at least one rule must be set. */
interface RetentionRules {
  archivedEventsOlderThanMs: number | undefined;
  sessionsIdleLongerThanMs: number | undefined;
  maxArchivedEventsPerSession: number | undefined;
}

export function validateRetentionPolicy(policy: RetentionPolicy): RetentionRules {
  if (policy === null || policy === undefined) throw new InvalidArgumentError('policy must not be null');
  const archivedEventsOlderThanMs = optionalDuration(policy.archivedEventsOlderThanMs, 'archivedEventsOlderThanMs');
  const sessionsIdleLongerThanMs = optionalDuration(policy.sessionsIdleLongerThanMs, 'sessionsIdleLongerThanMs');
  const max = policy.maxArchivedEventsPerSession;
  if (max !== undefined && !(typeof max === 'number' && Number.isInteger(max) && max >= 0)) {
    throw new InvalidArgumentError('maxArchivedEventsPerSession must be an integer >= 0');
  }
  if (archivedEventsOlderThanMs === undefined && sessionsIdleLongerThanMs === undefined && max === undefined) {
    throw new InvalidArgumentError(
      'policy must set archivedEventsOlderThanMs, maxArchivedEventsPerSession or sessionsIdleLongerThanMs',
    );
  }
  return { archivedEventsOlderThanMs, sessionsIdleLongerThanMs, maxArchivedEventsPerSession: max };
}

/**
 * Applies a RetentionPolicy to every session, page by page and in bounded batches. Each repository call is
 * short and atomic on its own, so traffic goes on meanwhile: archive purges never touch the active window
 * (no append or compaction conflicts with them), and an idle session is erased only if it is still idle
 * inside the erasing call. Running it again with the same clock removes nothing more.
 */
export class RetentionRunner {
  constructor(
    private readonly ctx: DataLifecycleContext,
    private readonly eraser: SessionEraser,
  ) {}

  async apply(policy: RetentionPolicy, options: RetentionOptions = {}): Promise<RetentionReport> {
    const rules = validateRetentionPolicy(policy);
    const opts = options ?? {};
    const batchSize = positiveInt(opts.batchSize, DEFAULT_BATCH_SIZE, 'batchSize');
    const pageSize = positiveInt(opts.pageSize, DEFAULT_PAGE_SIZE, 'pageSize');
    const concurrency = positiveInt(opts.concurrency, 1, 'concurrency');
    const pauseMs = optionalDuration(opts.pauseMs, 'pauseMs') ?? 0;
    const pause = () => (pauseMs > 0 && !aborted() ? sleep(pauseMs) : Promise.resolve());
    const { repository } = this.ctx;
    if (!isRetentionRepository(repository)) {
      throw new IllegalStateError(
        'the repository does not implement listSessionActivity and purgeArchivedEvents (RetentionRepository), which retention needs',
      );
    }
    const purgesArchive = rules.archivedEventsOlderThanMs !== undefined || rules.maxArchivedEventsPerSession !== undefined;

    const started = performance.now();
    const now = this.ctx.now().getTime();
    const before = rules.archivedEventsOlderThanMs === undefined ? undefined : new Date(now - rules.archivedEventsOlderThanMs);
    const idleBefore = rules.sessionsIdleLongerThanMs === undefined ? undefined : new Date(now - rules.sessionsIdleLongerThanMs);
    const progress: RetentionProgress = {
      sessionsScanned: 0,
      sessionsErased: 0,
      archivedEventsRemoved: 0,
      tombstonesExpired: 0,
      batches: 0,
    };
    const erased = emptyErasureReport();
    const aborted = () => opts.signal?.aborted === true;
    const report = () => {
      try {
        opts.onProgress?.({ ...progress });
      } catch (error) {
        this.ctx.logger.warn('a retention progress listener threw; ignored', { error: String(error) });
      }
    };

    const retain = async (s: SessionActivity): Promise<void> => {
      if (aborted()) return;
      progress.sessionsScanned++;
      if (idleBefore !== undefined && s.lastActiveAt < idleBefore) {
        const r = await this.eraser.eraseSession(s.id, 'idle', idleBefore);
        progress.batches++;
        if (r.sessions > 0) {
          mergeErasureReports(erased, r);
          progress.sessionsErased++;
          report();
        }
        await pause();
        if (r.sessions > 0) return;
      }
      if (!purgesArchive) return;
      for (;;) {
        if (aborted()) return;
        const ids = await repository.purgeArchivedEvents(s.id, {
          ...(before !== undefined ? { before } : {}),
          ...(rules.maxArchivedEventsPerSession !== undefined ? { keepLast: rules.maxArchivedEventsPerSession } : {}),
          limit: batchSize,
        });
        progress.batches++;
        if (ids.length > 0) {
          progress.archivedEventsRemoved += ids.length;
          this.ctx.emit('eventsPurged', { sessionId: s.id, eventIds: ids });
          report();
        }
        // Also after the last batch of a session: the next session's first batch follows at once otherwise.
        await pause();
        if (ids.length < batchSize) return;
      }
    };

    let cursor: string | null = null;
    do {
      if (aborted()) break;
      const page = await repository.listSessionActivity(cursor, pageSize);
      await runPool(page.sessions, concurrency, retain);
      cursor = page.cursor;
    } while (cursor !== null);

    if (!aborted()) {
      progress.tombstonesExpired = await this.eraser.purgeExpiredTombstones(batchSize, () => {
        progress.batches++;
      });
      report();
    }
    const result: RetentionReport = { ...progress, erased, aborted: aborted(), durationMs: performance.now() - started };
    this.ctx.logger.info('retention applied', {
      ...progress,
      aborted: result.aborted,
      durationMs: Math.round(result.durationMs),
    });
    return result;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs `work` over `items` with at most `concurrency` in flight; the first failure rejects once all settle. */
async function runPool<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
