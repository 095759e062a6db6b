import { readFileSync } from 'node:fs';

/**
 * `--help`: prints the running script's header comment (its command line and options) and exits 0 before the
 * script does any work. Every script reads its options through `arg` (the first read comes before any work), and
 * one without options calls this itself; before, `--help` was an unknown flag and started the full-size run.
 */
export function exitOnHelp(): void {
  if (!process.argv.includes('--help')) return;
  process.stdout.write(headerComment(readFileSync(process.argv[1]!, 'utf8')));
  process.exit(0);
}

/** The comment a script's file opens with (`//` lines or one `/** … *\/` block), without its comment marks. */
export function headerComment(source: string): string {
  const lines = source.split('\n');
  const header: string[] = [];
  if (lines[0]?.startsWith('/**')) {
    for (const line of lines.slice(1)) {
      if (line.trim().startsWith('*/')) break;
      header.push(line.replace(/^\s*\* ?/, ''));
    }
  } else {
    for (const line of lines) {
      if (!line.startsWith('//')) break;
      header.push(line.replace(/^\/\/ ?/, ''));
    }
  }
  return `${header.join('\n')}\n`;
}

/** The value after `--<name>` on the command line, or `fallback`. */
export function arg(name: string, fallback: string): string {
  exitOnHelp();
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

/** `arg` as a number. */
export function numberArg(name: string, fallback: string): number {
  return Number(arg(name, fallback));
}
