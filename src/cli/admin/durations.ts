import { InvalidArgumentError } from '../../errors.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** A command-line duration: a number with a unit (`90d`, `12h`, `30m`, `45s`, `500ms`, `2w`) or bare milliseconds. */
export function parseDuration(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)?$/.exec(text.trim());
  if (match === null) {
    throw new InvalidArgumentError(`${flag} must be a duration such as 90d, 12h, 30m or 45s (got '${text}')`);
  }
  return Math.round(Number(match[1]) * UNITS[match[2] ?? 'ms']!);
}

/** A positive integer flag. */
export function parsePositiveInt(text: string, flag: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n <= 0) {
    throw new InvalidArgumentError(`${flag} must be a positive integer (got '${text}')`);
  }
  return n;
}
