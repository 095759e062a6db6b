import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InvalidArgumentError } from 'session-compaction';

/** `2026-11-24T1730`: minutes are enough to tell runs apart; a second run in the same minute gets `-2`. */
export function runStamp(now: Date): string {
  const iso = now.toISOString();
  return `${iso.slice(0, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}`;
}

function isNonEmptyDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory() && readdirSync(path).length > 0;
}

/** A new folder `./bench-results/<date>T<hhmm>` under `cwd` (UTC), never one that already holds files. */
export function defaultOutputDirectory(cwd: string, now: Date = new Date()): string {
  const base = join(resolve(cwd), 'bench-results', runStamp(now));
  let candidate = base;
  for (let n = 2; existsSync(candidate); n++) candidate = `${base}-${n}`;
  return candidate;
}

/**
 * Refuses to write into a folder that already holds files (earlier results, or committed documents) unless
 * `force`, and a path that is a file.
 */
export function requireWritableOutputDirectory(path: string, force: boolean): void {
  if (existsSync(path) && !statSync(path).isDirectory()) {
    throw new InvalidArgumentError(`--out ${path} is a file, not a folder`);
  }
  if (!force && isNonEmptyDirectory(path)) {
    throw new InvalidArgumentError(
      `--out ${path} is not empty; its files would be overwritten. Pass --force to overwrite them, or choose another --out`,
    );
  }
}
