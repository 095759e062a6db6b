import { InvalidArgumentError } from 'session-compaction';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** A command-line duration: a number with a unit (`90d`, `12h`, `30m`, `45s`, `500ms`, `2w`) or bare milliseconds. */
export function parseDuration(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)?$/.exec(text.trim());
  if (match === null) {
    throw new InvalidArgumentError(`${flag} must be a duration such as 90d, 12h, 30m or 45s (got '${text}')`);
  }
  return Math.round(Number(match[1]) * UNITS[match[2] ?? 'ms']!);
}

/**
 * A command-line point in time: an ISO-8601 date or date-time (`2025-06-01`, `2025-06-01T12:00:00Z`). The
 * shape is checked first because `new Date` also reads text such as `12` (as December 2001).
 */
export function parseTime(text: string, flag: string): Date {
  const date = new Date(text.trim());
  const day = /^([+-]?\d{4,6})-(\d{2})-(\d{2})(?:[T ]|$)/i.exec(text.trim());
  // `new Date` rolls an impossible day over (2025-02-30 is 2 March): the calendar day is checked on its own.
  if (day === null || Number.isNaN(date.getTime()) || !isCalendarDay(Number(day[1]), Number(day[2]), Number(day[3]))) {
    throw new InvalidArgumentError(`${flag} must be an ISO-8601 date or date-time such as 2025-06-01T12:00:00Z (got '${text}')`);
  }
  return date;
}

function isCalendarDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** A positive integer flag. */
export function parsePositiveInt(text: string, flag: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n <= 0) {
    throw new InvalidArgumentError(`${flag} must be a positive integer (got '${text}')`);
  }
  return n;
}
