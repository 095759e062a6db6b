/** The value after `--<name>` on the command line, or `fallback`. */
export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

/** `arg` as a number. */
export function numberArg(name: string, fallback: string): number {
  return Number(arg(name, fallback));
}
