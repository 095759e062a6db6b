import type { Command } from 'commander';
import { InvalidArgumentError, DefaultSessionService } from 'session-compaction';
import type { RetentionPolicy, RetentionProgress } from 'session-compaction/lifecycle';
import type { AdminContext, UrlFlags } from '../AdminContext.js';
import { printResult } from '../CliIo.js';
import { parseDuration, parsePositiveInt } from '../admin/durations.js';
import { requireTombstones } from '../admin/lifecycleSchema.js';
import { withUrlOptions } from './urlOptions.js';

interface RetentionFlags extends UrlFlags {
  archivedOlderThan?: string;
  maxArchived?: string;
  idleLongerThan?: string;
  tombstoneTtl?: string;
  batchSize: string;
  concurrency: string;
  pause?: string;
  secureDelete?: boolean;
}

/** Progress lines at most this often: a pass over a large store reports thousands of batches. */
const PROGRESS_INTERVAL_MS = 1000;

export function registerRetentionCommand(program: Command, ctx: AdminContext): void {
  withUrlOptions(
    program
      .command('retention')
      .description(
        'Apply a retention policy (SessionService.applyRetention) in bounded batches: purge old archived events ' +
          '(summaries stay), erase idle sessions with a tombstone, drop expired tombstones. Safe while traffic goes on; ' +
          'Ctrl-C stops between batches and a rerun continues.',
      )
      .option('--archived-older-than <duration>', 'remove archived events older than this, e.g. 90d')
      .option('--max-archived <count>', 'keep at most this many archived events per session (the newest)')
      .option('--idle-longer-than <duration>', 'erase sessions without activity for longer than this, e.g. 180d')
      .option('--tombstone-ttl <duration>', 'how long an erased id stays blocked (default 30d; 0: no tombstones)')
      .option('--batch-size <count>', 'most archived events removed per transaction', '500')
      .option('--concurrency <count>', 'sessions worked on at once', '1')
      .option('--pause <duration>', 'wait after every batch, e.g. 10ms: lets other processes write to a shared SQLite file')
      .option('--secure-delete', 'SQLite: overwrite what is removed and checkpoint the WAL (slower)'),
  ).action(async (flags: RetentionFlags) => {
    const policy: RetentionPolicy = {};
    if (flags.archivedOlderThan !== undefined)
      policy.archivedEventsOlderThanMs = parseDuration(flags.archivedOlderThan, '--archived-older-than');
    if (flags.idleLongerThan !== undefined)
      policy.sessionsIdleLongerThanMs = parseDuration(flags.idleLongerThan, '--idle-longer-than');
    if (flags.maxArchived !== undefined) {
      const max = Number(flags.maxArchived);
      if (!/^\d+$/.test(flags.maxArchived.trim()) || !Number.isSafeInteger(max))
        throw new InvalidArgumentError(`--max-archived must be an integer >= 0 (got '${flags.maxArchived}')`);
      policy.maxArchivedEventsPerSession = max;
    }
    if (Object.keys(policy).length === 0)
      throw new InvalidArgumentError('give at least one of --archived-older-than, --max-archived, --idle-longer-than');
    const batchSize = parsePositiveInt(flags.batchSize, '--batch-size');
    const concurrency = parsePositiveInt(flags.concurrency, '--concurrency');
    const pauseMs = flags.pause === undefined ? 0 : parseDuration(flags.pause, '--pause');
    const tombstoneTtlMs = flags.tombstoneTtl === undefined ? undefined : parseDuration(flags.tombstoneTtl, '--tombstone-ttl');

    await ctx.withRepository(
      flags.url,
      {
        ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}),
        ...(flags.secureDelete === true ? { secureDelete: true } : {}),
      },
      async (repository, where) => {
        if (policy.sessionsIdleLongerThanMs !== undefined)
          await requireTombstones(repository, where, 'retention --idle-longer-than');
        const service = new DefaultSessionService(repository, {
          logger: ctx.logger,
          ...(tombstoneTtlMs !== undefined ? { tombstoneTtlMs } : {}),
        });
        const controller = new AbortController();
        const stop = () => controller.abort();
        process.once('SIGINT', stop);
        let last = 0;
        const showProgress = flags.progress !== false && ctx.io.stderrIsTTY;
        const onProgress = (p: RetentionProgress) => {
          if (!showProgress || performance.now() - last < PROGRESS_INTERVAL_MS) return;
          last = performance.now();
          ctx.io.stderr(
            `retention: ${p.sessionsScanned} sessions scanned, ${p.archivedEventsRemoved} archived events removed, ` +
              `${p.sessionsErased} idle sessions erased\n`,
          );
        };
        try {
          const report = await service.applyRetention(policy, {
            batchSize,
            concurrency,
            pauseMs,
            onProgress,
            signal: controller.signal,
          });
          const { erased, ...totals } = report;
          const result = {
            store: where,
            policy,
            ...totals,
            durationMs: Math.round(report.durationMs),
            erased: { ...erased, sessionIds: erased.sessionIds },
          };
          printResult(
            ctx.io,
            flags.json === true,
            result,
            () =>
              `${report.aborted ? 'stopped early (run again to continue): ' : ''}` +
              `${report.sessionsScanned} sessions scanned in ${where}: ${report.archivedEventsRemoved} archived events removed, ` +
              `${report.sessionsErased} idle sessions erased (${erased.activeEvents + erased.archivedEvents} events), ` +
              `${report.tombstonesExpired} expired tombstones dropped, ${report.batches} batches in ${(report.durationMs / 1000).toFixed(1)} s\n`,
          );
          if (report.aborted) ctx.fail();
        } finally {
          process.removeListener('SIGINT', stop);
        }
      },
    );
  });
}
