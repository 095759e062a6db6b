import type { Command } from 'commander';
import { DefaultSessionService } from 'session-compaction';
import { parseTime } from '../admin/durations.js';
import { hasTombstones } from '../admin/lifecycleSchema.js';
import type { AdminContext, UrlFlags } from '../AdminContext.js';
import { printResult, progressReporter } from '../CliIo.js';
import { withUrlOptions } from './urlOptions.js';

interface ExpireFlags extends UrlFlags {
  before?: string;
  dryRun?: boolean;
}

export function registerExpireCommand(program: Command, ctx: AdminContext): void {
  withUrlOptions(
    program
      .command('expire')
      .description('TTL sweep: delete every session whose expiresAt is before now (or --before), with its events.')
      .option('--before <iso-date>', 'expiry cut-off (default now)')
      .option('--dry-run', 'list the sessions that would be deleted'),
  ).action(async (flags: ExpireFlags) => {
    const before = flags.before === undefined ? new Date() : parseTime(flags.before, '--before');
    await ctx.withRepository(
      flags.url,
      { ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}) },
      async (repository, where) => {
        const ids = await repository.findExpiredSessionIds(before);
        const tombstones = await hasTombstones(repository);
        if (flags.dryRun !== true) {
          const progress = progressReporter(ctx.io, flags.progress !== false && ids.length > 1);
          progress.start(ids.length, 'expire');
          // Through the service: each deleted id gets a tombstone, as with SessionService.delete (when the
          // schema has them: this command does not migrate).
          const service = new DefaultSessionService(repository, { logger: ctx.logger });
          for (const id of ids) {
            if (tombstones) await service.delete(id);
            else await repository.delete(id);
            progress.tick(id);
          }
          progress.stop();
        }
        const report = {
          store: where,
          before: before.toISOString(),
          dryRun: flags.dryRun === true,
          expired: ids.length,
          sessionIds: ids,
          tombstones,
        };
        printResult(ctx.io, flags.json === true, report, () =>
          flags.dryRun === true
            ? `${ids.map((id) => `would delete ${id}\n`).join('')}${ids.length} session(s) expired before ${report.before} in ${where} (dry run: nothing deleted)\n`
            : `deleted ${ids.length} session(s) expired before ${report.before} from ${where}\n`,
        );
      },
    );
  });
}
