import type { Command } from 'commander';
import { DefaultSessionService } from 'session-compaction';
import type { AdminContext, UrlFlags } from '../AdminContext.js';
import { printResult } from '../CliIo.js';
import { parseDuration } from '../admin/durations.js';
import { requireTombstones } from '../admin/lifecycleSchema.js';
import { withUrlOptions } from './urlOptions.js';

interface EraseUserFlags extends UrlFlags {
  dryRun?: boolean;
  tombstoneTtl?: string;
  secureDelete?: boolean;
}

export function registerEraseUserCommand(program: Command, ctx: AdminContext): void {
  withUrlOptions(
    program
      .command('erase-user')
      .description(
        'Erase every session of one user (SessionService.eraseUser): sessions, active and archived events, summaries, ' +
          'masked copies, metadata; each id is tombstoned. Prints what was removed.',
      )
      .argument('<userId>')
      .option('--dry-run', 'list the sessions that would be erased')
      .option('--tombstone-ttl <duration>', 'how long the erased ids stay blocked (default 30d)')
      .option('--secure-delete', 'SQLite: overwrite the erased rows and checkpoint the WAL'),
  ).action(async (userId: string, flags: EraseUserFlags) => {
    const tombstoneTtlMs = flags.tombstoneTtl === undefined ? undefined : parseDuration(flags.tombstoneTtl, '--tombstone-ttl');
    await ctx.withRepository(
      flags.url,
      {
        ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}),
        ...(flags.secureDelete === true ? { secureDelete: true } : {}),
      },
      async (repository, where) => {
        // The service checks the user id (the API's messages) on both paths.
        const service = new DefaultSessionService(repository, {
          logger: ctx.logger,
          ...(tombstoneTtlMs !== undefined ? { tombstoneTtlMs } : {}),
        });
        if (flags.dryRun === true) {
          const ids = (await service.findByUserId(userId)).map((s) => s.id);
          printResult(
            ctx.io,
            flags.json === true,
            { store: where, userId, dryRun: true, sessions: ids.length, sessionIds: ids },
            () =>
              `${ids.map((id) => `would erase ${id}\n`).join('')}${ids.length} session(s) of ${userId} in ${where} (dry run: nothing erased)\n`,
          );
          return;
        }
        await requireTombstones(repository, where, 'erase-user');
        const report = await service.eraseUser(userId);
        printResult(
          ctx.io,
          flags.json === true,
          { store: where, userId, dryRun: false, ...report },
          () =>
            `erased ${report.sessions} session(s) of ${userId} from ${where}: ${report.activeEvents} active and ` +
            `${report.archivedEvents} archived events, ${report.summaries} summary events, ${report.maskedCopies} masked copies; ` +
            `${report.tombstones} id(s) tombstoned\n`,
        );
      },
    );
  });
}
