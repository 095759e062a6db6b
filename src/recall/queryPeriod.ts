import { MONTH_NAMES } from './recallBlock.js';
import { referencedDays } from './referencedDays.js';

/**
 * A calendar period that a request names ("on 8 May", "May 23, 2023", "in June", "in 2023", "2023-05-08"):
 * `includes(date)` holds when the date (UTC, the day recall shows) falls in any period named.
 */
export interface QueryPeriod {
  includes(date: Date): boolean;
}

const MONTHS = MONTH_NAMES.map((m) => m.toLowerCase());

/** Month names and their common abbreviations, lower-cased, to the month's index. */
const MONTH_OF = new Map<string, number>([
  ...MONTHS.map((m, i) => [m, i] as const),
  ...MONTHS.map((m, i) => [m.slice(0, 3), i] as const),
  ['sept', 8],
]);

/** Month names that are everyday words too ("may", "march") and abbreviations: a month only when capitalised or next to a number. */
const AMBIGUOUS = new Set(['may', 'march', ...MONTHS.map((m) => m.slice(0, 3)), 'sept']);

const YEAR = /^(?:19|20)\d\d$/;
const DAY = /^(\d{1,2})(?:st|nd|rd|th)?$/i;
const ISO_DATE = /\b(\d{4})-(\d{2})-(\d{2})\b/g;

interface Period {
  year: number | null;
  month: number | null;
  day: number | null;
}

/**
 * The periods `query` names by its dates, or null when it names none. Understood: ISO dates, a month name
 * with or without a day before or after it ("8 May", "May 8th", "the 8th of May") and a year, and a year
 * alone; with `now` (the request's own time), the relative dates referencedDays reads ("yesterday", "two days
 * ago", "last week") as the days they name from it.
 */
export function queryPeriod(query: string, now?: Date): QueryPeriod | null {
  const periods: Period[] = [];
  if (now !== undefined)
    for (const d of referencedDays(query, now))
      periods.push({ year: d.getUTCFullYear(), month: d.getUTCMonth(), day: d.getUTCDate() });
  for (const m of query.matchAll(ISO_DATE)) periods.push({ year: Number(m[1]), month: Number(m[2]) - 1, day: Number(m[3]) });
  // The words of the rest: an ISO date's year is not a year named alone.
  const words = query.replace(ISO_DATE, ' ').match(/[\p{L}\p{N}]+/gu) ?? [];
  const dayAt = (i: number): number | null => {
    const m = DAY.exec(words[i] ?? '');
    const day = m === null ? 0 : Number(m[1]);
    return day >= 1 && day <= 31 ? day : null;
  };
  const yearAt = (i: number): number | null => (YEAR.test(words[i] ?? '') ? Number(words[i]) : null);
  const yearsTaken = new Set<number>();
  words.forEach((word, i) => {
    const lower = word.toLowerCase();
    const month = MONTH_OF.get(lower);
    if (month === undefined) return;
    // "May 8, 2023" / "May 2023" / "8 May 2023" / "the 8th of May"
    let day = dayAt(i + 1);
    const yearIndex = day !== null ? i + 2 : i + 1;
    const year = yearAt(yearIndex);
    if (day === null) day = dayAt(i - 1) ?? (words[i - 1]?.toLowerCase() === 'of' ? dayAt(i - 2) : null);
    const capitalised = word[0] !== lower[0];
    if (AMBIGUOUS.has(lower) && !capitalised && day === null && year === null) return;
    if (year !== null) yearsTaken.add(yearIndex);
    periods.push({ year, month, day });
  });
  words.forEach((word, i) => {
    if (!yearsTaken.has(i) && YEAR.test(word)) periods.push({ year: Number(word), month: null, day: null });
  });
  if (periods.length === 0) return null;
  return {
    includes: (date: Date) =>
      periods.some(
        (p) =>
          (p.year === null || p.year === date.getUTCFullYear()) &&
          (p.month === null || p.month === date.getUTCMonth()) &&
          (p.day === null || p.day === date.getUTCDate()),
      ),
  };
}
