import { Option, type Command } from 'commander';

/** --url, --prefix, --json and --no-progress, as every single-store admin command takes them. */
export function withUrlOptions(command: Command): Command {
  return command
    .requiredOption('--url <url>', 'the store: sqlite:<path>, postgres://…, redis://… (a ?prefix=… parameter selects the prefix)')
    .addOption(new Option('--prefix <prefix>', 'table / key prefix (default: the backend default)'))
    .option('--json', 'machine-readable output on stdout')
    .option('--no-progress', 'no progress bar on stderr');
}
