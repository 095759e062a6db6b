#!/usr/bin/env node
import { CommanderError } from 'commander';
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { createBenchProgram } from './cli.js';

/**
 * Runs `session-compaction-bench`; `argv` as in `process.argv`. Returns the exit code (0, or 2 for a usage
 * error or a failed run) and sets `process.exitCode` to it. Errors are printed on stderr, without a stack.
 */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  let code = 0;
  try {
    await createBenchProgram(argv).parseAsync([...argv]);
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with code 0; usage errors were already printed.
      code = error.exitCode === 0 ? 0 : 2;
    } else {
      process.stderr.write(`session-compaction-bench: ${error instanceof Error ? error.message : String(error)}\n`);
      code = 2;
    }
  }
  process.exitCode = code;
  return code;
}

// Run when executed directly (the package's "bin" points at the built dist/main.js).
// Installed as a bin, argv[1] is the node_modules/.bin symlink: compare real paths.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) await main();
