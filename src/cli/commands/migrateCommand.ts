import type { Command } from 'commander';
import { isMigratableRepository } from '../../repository/MigratableRepository.js';
import type { AdminContext, UrlFlags } from '../AdminContext.js';
import { printResult } from '../CliIo.js';
import { withUrlOptions } from './urlOptions.js';

interface MigrateFlags extends UrlFlags {
  dryRun?: boolean;
}

export function registerMigrateCommand(program: Command, ctx: AdminContext): void {
  withUrlOptions(
    program
      .command('migrate')
      .description('Bring the store’s schema to this version of the library; --dry-run prints the pending steps.')
      .option('--dry-run', 'print the steps, change nothing'),
  ).action(async (flags: MigrateFlags) => {
    await ctx.withRepository(
      flags.url,
      { ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}) },
      async (repository, where) => {
        if (!isMigratableRepository(repository)) {
          printResult(
            ctx.io,
            flags.json === true,
            { store: where, migratable: false },
            () => `${where} has no schema to migrate\n`,
          );
          return;
        }
        const status = await repository.schemaStatus();
        if (status.unknown.length > 0) {
          // Same refusal as opening it: the error names the versions.
          await repository.migrate({ dryRun: true });
        }
        const applied = flags.dryRun === true ? [] : await repository.migrate();
        const report = { store: where, dryRun: flags.dryRun === true, ...status, appliedNow: applied };
        printResult(ctx.io, flags.json === true, report, () => {
          const lines = [`${where}: schema versions applied [${status.applied.join(', ')}], latest known ${status.latest}`];
          if (status.pending.length === 0) lines.push('up to date');
          for (const step of status.pending) {
            lines.push(`${flags.dryRun === true ? 'pending' : 'applied'} ${step.version} ${step.name}`);
            if (flags.dryRun === true) for (const statement of step.statements) lines.push(statement.replace(/^/gm, '    '));
          }
          return `${lines.join('\n')}\n`;
        });
      },
    );
  });
}
