#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { createDefaultLogger } from 'session-compaction';
import { AdminContext } from './AdminContext.js';
import { processIo, type CliIo } from './CliIo.js';
import { registerCompactCommand } from './commands/compactCommand.js';
import { registerCopyCommand } from './commands/copyCommand.js';
import { registerEraseUserCommand } from './commands/eraseUserCommand.js';
import { registerExpireCommand } from './commands/expireCommand.js';
import { registerExportCommand } from './commands/exportCommand.js';
import { registerImportCommand } from './commands/importCommand.js';
import { registerMigrateCommand } from './commands/migrateCommand.js';
import { registerRetentionCommand } from './commands/retentionCommand.js';
import { registerSessionsCommand } from './commands/sessionsCommand.js';
import { registerShowCommand } from './commands/showCommand.js';
import { registerStudioCommand } from './commands/studioCommand.js';
import { registerVerifyCommand } from './commands/verifyCommand.js';
import { registerBenchCommand } from './commands/benchCommand.js';

/** Exit codes: 0 fine, 1 the command found a problem (a violation, a mismatch, a failed session), 2 an error. */
export const EXIT_PROBLEM = 1;
export const EXIT_ERROR = 2;

/** The `session-compaction` program: the admin commands, and `bench`. */
export function createProgram(ctx: AdminContext): Command {
  const program = new Command()
    .name('session-compaction')
    .description(
      'Inspect, verify, compact, export, import, copy, expire, erase and migrate session-compaction stores; `studio` serves a local web inspector; `bench` runs session-compaction-bench.',
    )
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => ctx.io.stdout(s), writeErr: (s) => ctx.io.stderr(s) });
  registerSessionsCommand(program, ctx);
  registerShowCommand(program, ctx);
  registerVerifyCommand(program, ctx);
  registerCompactCommand(program, ctx);
  registerExportCommand(program, ctx);
  registerImportCommand(program, ctx);
  registerCopyCommand(program, ctx);
  registerExpireCommand(program, ctx);
  registerRetentionCommand(program, ctx);
  registerEraseUserCommand(program, ctx);
  registerMigrateCommand(program, ctx);
  registerStudioCommand(program, ctx);
  registerBenchCommand(program, ctx);
  // Subcommands report through the same streams and must not call process.exit either.
  for (const command of program.commands) {
    command.exitOverride().configureOutput({ writeOut: (s) => ctx.io.stdout(s), writeErr: (s) => ctx.io.stderr(s) });
    for (const sub of command.commands)
      sub.exitOverride().configureOutput({ writeOut: (s) => ctx.io.stdout(s), writeErr: (s) => ctx.io.stderr(s) });
  }
  return program;
}

/**
 * Runs the command line; `argv` as in `process.argv`. Returns the exit code and sets `process.exitCode` to it.
 * The library's own log lines (errors only) go to stderr.
 */
export async function main(argv: readonly string[] = process.argv, io: CliIo = processIo): Promise<number> {
  const ctx = new AdminContext(io, createDefaultLogger({ level: 'error' }));
  let code: number;
  try {
    await createProgram(ctx).parseAsync([...argv]);
    code = ctx.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with code 0; usage errors were already printed.
      code = error.exitCode === 0 ? 0 : EXIT_ERROR;
    } else {
      io.stderr(`session-compaction: ${error instanceof Error ? error.message : String(error)}\n`);
      code = EXIT_ERROR;
    }
  }
  process.exitCode = code;
  return code;
}

// Run when executed directly (the package's "bin" points at the built dist/main.js).
// Installed as a bin, argv[1] is the node_modules/.bin symlink: compare real paths.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) await main();
