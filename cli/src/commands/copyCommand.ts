import type { Command } from 'commander';
import type { AdminContext } from '../AdminContext.js';
import { printResult, progressReporter } from '../CliIo.js';
import { copySessions } from '../admin/copySessions.js';
import { requireSchema } from '../admin/storeSchema.js';
import { describeLocation, openRepository } from '../openRepository.js';

interface CopyFlags {
  from: string;
  to: string;
  fromPrefix?: string;
  toPrefix?: string;
  session?: string[];
  concurrency: string;
  batchSize: string;
  overwrite?: boolean;
  verify?: boolean;
  durable?: boolean;
  json?: boolean;
  progress?: boolean;
}

export function registerCopyCommand(program: Command, ctx: AdminContext): void {
  program
    .command('copy')
    .description(
      'Copy every session from one store to another (SQLite, PostgreSQL, Redis, in any direction), then verify that the target holds identical logs. Resumable: run it again after an interruption.',
    )
    .requiredOption('--from <url>', 'the source store')
    .requiredOption('--to <url>', 'the target store (its schema is created or migrated)')
    .option('--from-prefix <prefix>', 'table / key prefix of the source')
    .option('--to-prefix <prefix>', 'table / key prefix of the target')
    .option('--session <ids...>', 'only these sessions')
    .option('--concurrency <n>', 'sessions copied at once', '4')
    .option('--batch-size <n>', 'events per write', '500')
    .option('--overwrite', 'replace target sessions whose log differs from the source’s (default: report them)')
    .option('--no-verify', 'skip the final comparison')
    .option('--durable', 'SQLite target: sync every commit to disk (default: WAL with synchronous=NORMAL)')
    .option('--json', 'machine-readable output on stdout')
    .option('--no-progress', 'no progress bar on stderr')
    .action(async (flags: CopyFlags) => {
      const source = await openRepository(flags.from, {
        logger: ctx.logger,
        ...(flags.fromPrefix !== undefined ? { prefix: flags.fromPrefix } : {}),
      });
      try {
        // The source is read, never migrated: one without a schema is refused, naming `migrate`.
        await requireSchema(source.repository, source.location, describeLocation(source.location));
        const target = await openRepository(flags.to, {
          logger: ctx.logger,
          initializeSchema: true,
          ...(flags.durable === true ? {} : { synchronous: 'NORMAL' as const }),
          ...(flags.toPrefix !== undefined ? { prefix: flags.toPrefix } : {}),
        });
        try {
          const report = await copySessions(source.repository, target.repository, {
            concurrency: Math.max(1, Number(flags.concurrency) || 1),
            batchSize: Math.max(1, Number(flags.batchSize) || 500),
            overwrite: flags.overwrite === true,
            verify: flags.verify !== false,
            progress: progressReporter(ctx.io, flags.progress !== false),
            ...(flags.session !== undefined ? { sessionIds: flags.session } : {}),
          });
          const ok = report.failures.length === 0 && (report.verification?.mismatches.length ?? 0) === 0;
          if (!ok) ctx.fail();
          const from = describeLocation(source.location);
          const to = describeLocation(target.location);
          printResult(ctx.io, flags.json === true, { from, to, ok, ...report }, () => {
            const lines = [
              ...report.failures.map((f) => `FAILED ${f.sessionId}: ${f.error}`),
              ...(report.verification?.mismatches ?? []).map((m) => `MISMATCH ${m.sessionId}: ${m.reason}`),
              `copied ${report.sessions} session(s) from ${from} to ${to} in ${(report.copyMs / 1000).toFixed(1)} s: ` +
                `${report.written} written, ${report.resumed} resumed, ${report.unchanged} unchanged, ${report.overwritten} overwritten; ` +
                `${report.eventsAppended} events appended`,
              report.verification === null
                ? 'not verified (--no-verify)'
                : `${ok ? 'verified' : 'VERIFICATION FAILED'}: ${report.verification.checked} session(s) compared in ${(report.verifyMs / 1000).toFixed(1)} s, ${report.verification.mismatches.length} mismatch(es)`,
            ];
            return `${lines.join('\n')}\n`;
          });
        } finally {
          await target.repository.close?.();
        }
      } finally {
        await source.repository.close?.();
      }
    });
}
