import { spawn } from 'node:child_process';
import { Option, type Command } from 'commander';
import { InvalidArgumentError } from 'session-compaction';
import type { AdminContext } from '../AdminContext.js';
import { startStudio } from '../studio/startStudio.js';

interface StudioFlags {
  url?: string;
  config?: string;
  prefix?: string;
  port?: string;
  allowWrites?: boolean;
  contextWindow?: string;
  open?: boolean;
}

function positiveInteger(raw: string | undefined, flag: string, min: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${flag} must be an integer >= ${min}`);
  return n;
}

/** The platform's "open this URL" command, detached; a failure only means the user opens it by hand. */
function openBrowser(url: string): void {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(command, args as string[], { detached: true, stdio: 'ignore' });
    child.on('error', () => {});
    child.unref();
  } catch {
    // No opener on this machine: the URL is printed.
  }
}

export function registerStudioCommand(program: Command, ctx: AdminContext): void {
  program
    .command('studio')
    .description(
      'Serve a local web inspector of one store on 127.0.0.1: sessions, timelines, compactions, prompts, previews, health. Read-only unless --allow-writes.',
    )
    .option('--url <url>', 'the store: sqlite:<path>, postgres://…, redis://… (a ?prefix=… parameter selects the prefix)')
    .option(
      '--config <file>',
      'configuration file (YAML or JSON): its repository (unless --url), window, recall settings, profiles',
    )
    .addOption(new Option('--prefix <prefix>', 'table / key prefix (default: the backend default)'))
    .option('--port <n>', 'port on 127.0.0.1 (default: a free one)')
    .option('--allow-writes', 'allow reverting compactions and applying previews')
    .option(
      '--context-window <tokens>',
      'the window pressure and prompts are measured against (default: the configuration’s, else 8000)',
    )
    .option('--no-open', 'do not open a browser')
    .action(async (flags: StudioFlags) => {
      if (flags.url === undefined && flags.config === undefined) throw new InvalidArgumentError('give --url or --config');
      const port = positiveInteger(flags.port, '--port', 1);
      const window = positiveInteger(flags.contextWindow, '--context-window', 1);
      const studio = await startStudio({
        logger: ctx.logger,
        ...(flags.url !== undefined ? { url: flags.url } : {}),
        ...(flags.config !== undefined ? { config: flags.config } : {}),
        ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}),
        ...(port !== undefined ? { port } : {}),
        ...(window !== undefined ? { contextWindowTokens: window } : {}),
        allowWrites: flags.allowWrites === true,
      });
      ctx.io.stdout(
        `session-compaction studio on ${studio.where} (${flags.allowWrites === true ? 'writes allowed' : 'read-only'})\n` +
          `  ${studio.url}\n` +
          'The URL carries the access token: keep it to yourself. Ctrl-C stops the studio.\n',
      );
      if (flags.open !== false && process.stdout.isTTY === true) openBrowser(studio.url);
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await studio.close();
    });
}
