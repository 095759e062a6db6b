import type { Command } from 'commander';
import { main as benchMain } from 'session-compaction-bench';
import type { AdminContext } from '../AdminContext.js';

/**
 * `session-compaction bench …` runs `session-compaction-bench …` with the same arguments: the benchmark is its
 * own package, which this CLI depends on anyway (its named strategies are the ones `compact --strategy` takes
 * and its recorded-session format is the one `export` writes), so the command documented before the split
 * keeps working at the cost of this forwarding.
 */
export function registerBenchCommand(program: Command, ctx: AdminContext): void {
  program.enablePositionalOptions();
  program
    .command('bench')
    .description(
      'Benchmark strategies on recorded sessions: the same as `session-compaction-bench` (run `session-compaction bench --help` for its flags).',
    )
    .argument('[args...]', 'arguments for session-compaction-bench')
    .helpOption(false)
    .allowUnknownOption()
    .passThroughOptions()
    .action(async (args: string[]) => {
      const code = await benchMain(['node', 'session-compaction-bench', ...args]);
      if (code !== 0) ctx.exitCode = Math.max(ctx.exitCode, code);
    });
}
