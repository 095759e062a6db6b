/** One UTC day: the unit recall dates events by. */
export const DAY_MS = 86_400_000;

/** How many days "<words> days ago" counts back, by the words before "days". */
const DAYS_AGO = new Map([
  ['a', 1],
  ['one', 1],
  ['two', 2],
  ['three', 3],
  ['four', 4],
  ['five', 5],
  ['six', 6],
  ['a couple of', 2],
  ['couple of', 2],
  ['a few', 3],
  ['few', 3],
]);

/**
 * Relative dates a message uses for what it tells ("yesterday", "two days ago", "last week", "last month"), as
 * the days they name counted from the message's own time: "I went to the group yesterday", written on 8 May,
 * is about 7 May, which a request naming "7 May" asks for. A range ("last week", "last month") gives each of
 * its days. Anything vaguer ("recently", "the other day") gives nothing. Days are UTC, as recall shows them.
 */
export function referencedDays(text: string, at: Date): Date[] {
  const day = Math.floor(at.getTime() / DAY_MS);
  if (!Number.isFinite(day)) return [];
  const days = new Set<number>();
  const span = (from: number, to: number) => {
    for (let d = from; d <= to; d++) days.add(d);
  };
  const lower = text.toLowerCase();
  if (/\byesterday\b/.test(lower)) days.add(day - 1);
  if (/\btomorrow\b/.test(lower)) days.add(day + 1);
  for (const m of lower.matchAll(/\b(\d|a couple of|couple of|a few|few|a|one|two|three|four|five|six)\s+days?\s+ago\b/g)) {
    const n = DAYS_AGO.get(m[1]!) ?? Number(m[1]);
    if (n >= 1) days.add(day - n);
  }
  if (/\blast (week|weekend)\b|\ba week ago\b/.test(lower)) span(day - 9, day - 1);
  if (/\bnext (week|weekend)\b/.test(lower)) span(day + 1, day + 9);
  const date = new Date(day * DAY_MS);
  const month = (offset: number) => {
    const first = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + offset, 1) / DAY_MS;
    const last = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + offset + 1, 1) / DAY_MS - 1;
    span(first, last);
  };
  if (/\blast month\b|\ba month ago\b/.test(lower)) month(-1);
  if (/\bnext month\b/.test(lower)) month(1);
  return [...days].map((d) => new Date(d * DAY_MS));
}
