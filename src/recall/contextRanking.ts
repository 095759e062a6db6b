import { messageName, messageText } from '../session/Message.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import type { QueryPeriod } from './queryPeriod.js';
import type { RetrievedEvent } from './Retriever.js';
import { DAY_MS, referencedDays } from './referencedDays.js';

/** Part of a session's log by position (see ContextAssembler.neighbourhood). */
export interface LogView {
  log: ReadonlyMap<number, SessionEvent>;
  position: ReadonlyMap<string, number>;
}

export interface ContextRankingOptions {
  /** An event next to hits may enter the ranking without matching itself (off when no neighbours are quoted). */
  withNeighbours: boolean;
  /** The period the request names by its dates (queryPeriod), or null. */
  period: QueryPeriod | null;
  /** Whether the request names a participant (namedInQuery); undefined: participants are not scored. */
  namesParticipant?: (name: string) => boolean;
}

/**
 * Weight of the neighbours' scores in an event's score (score regularisation over the log: an event is scored
 * with the evidence of the events next to it). A question and its answer are usually two messages ("What book
 * did you read?" / "Becoming Nicole!") and the query's words are in one of them only: the exchange ranks, not
 * the lone matching line. Both neighbours count — an answer between a question and its follow-up gets both:
 * measured against the better neighbour alone, evidence rose on LoCoMo (4k 88.1 → 88.5 %), τ-bench (2k
 * 45.8 → 46.6 %, 4k 84.2 → 84.7 %) and mini-swe-agent (4k 41.4 → 42.2 %, 8k 54.7 → 55.3 %), lower nowhere.
 */
export const NEIGHBOUR_EVIDENCE = 0.4;

/**
 * Factor of the score of an event dated in the period the request names ("what did she paint on 13 October?"):
 * the words of a date match every event of that month or year, so BM25 alone barely prefers the day named.
 * Measured on LoCoMo at 4k (13.5 % of its questions name a date): evidence +0.2 point (1.5 gives +0.15); the
 * τ-bench and mini-swe-agent requests name none. An event telling of the day by a relative date ("yesterday",
 * referencedDays) counts as of that day too: LoCoMo 2k / 4k / 8k +0.1 / 0 / +0.1 point.
 */
export const NAMED_PERIOD_FACTOR = 2;

/**
 * Weight of the best hit score of an event's day added to its score: the cluster hypothesis (relevant
 * messages come together — a topic is talked about in one conversation), with the day as the cluster. Measured
 * on LoCoMo (events dated) evidence +0.2 to +0.5 point at 2k, 4k and 8k, in every question category; spreading
 * the other way (fewer hits per day, MMR-like) lost 0.7 to 1.7 points. A log of one day is ranked as without it.
 */
export const SAME_DAY_EVIDENCE = 0.1;

/**
 * Factor of the score of an event written by a participant the request names ("What did Caroline research?"
 * prefers Caroline's turns over Melanie's mentions of Caroline): the name is one word of the query and, in a
 * conversation of two people, in half of the events, so its BM25 weight is small. Measured on LoCoMo (events
 * dated and named): evidence +0.4 point at 2k, 4k and 8k with × 1.5; × 1.25 gives +0.1 to +0.3, × 2 from 0 to
 * +0.4. τ-bench and mini-swe-agent name no participants.
 */
export const NAMED_PARTICIPANT_FACTOR = 1.5;

/** Whether the event is dated in the period, or tells of a day in it by a relative date ("yesterday"). */
function inPeriod(period: QueryPeriod, event: SessionEvent): boolean {
  if (period.includes(event.timestamp)) return true;
  const text = messageText(event.message);
  return text !== null && referencedDays(text, event.timestamp).some((d) => period.includes(d));
}

/**
 * The events to quote, best first: the hits re-ranked by their own score, NEIGHBOUR_EVIDENCE × their
 * neighbours' scores and SAME_DAY_EVIDENCE × the best score of their day, doubled (NAMED_PERIOD_FACTOR) when
 * dated in the period the request names. Only `eligible` events are ranked; equal scores keep log order. It
 * re-ranks any retriever's output (in process or pushed down), reading nothing.
 */
export function rankInContext(
  hits: readonly RetrievedEvent[],
  { log, position }: LogView,
  eligible: (event: SessionEvent) => boolean,
  { withNeighbours, period, namesParticipant }: ContextRankingOptions,
): SessionEvent[] {
  const score = new Map<number, number>();
  for (const hit of hits) {
    const at = position.get(hit.event.id);
    if (at !== undefined) score.set(at, Math.max(score.get(at) ?? 0, hit.score));
  }
  const dayOf = (event: SessionEvent) => Math.floor(event.timestamp.getTime() / DAY_MS);
  const bestOfDay = new Map<number, number>();
  for (const [at, value] of score) {
    const day = dayOf(log.get(at)!);
    bestOfDay.set(day, Math.max(bestOfDay.get(day) ?? 0, value));
  }
  const candidates = new Set<number>();
  for (const at of score.keys()) {
    candidates.add(at);
    if (withNeighbours) for (const q of [at - 1, at + 1]) if (log.has(q)) candidates.add(q);
  }
  const ranked: { at: number; value: number }[] = [];
  for (const at of candidates) {
    const event = log.get(at)!;
    if (!eligible(event)) continue;
    const neighbours = (score.get(at - 1) ?? 0) + (score.get(at + 1) ?? 0);
    let value = (score.get(at) ?? 0) + NEIGHBOUR_EVIDENCE * neighbours + SAME_DAY_EVIDENCE * (bestOfDay.get(dayOf(event)) ?? 0);
    // |value|: a retriever may score below zero (an embedding retriever's minScore), and the named day must still gain.
    if (period !== null && inPeriod(period, event)) value += (NAMED_PERIOD_FACTOR - 1) * Math.abs(value);
    const author = messageName(event.message);
    if (author !== undefined && namesParticipant?.(author) === true) value += (NAMED_PARTICIPANT_FACTOR - 1) * Math.abs(value);
    ranked.push({ at, value });
  }
  ranked.sort((a, b) => b.value - a.value || a.at - b.at);
  return ranked.map((r) => log.get(r.at)!);
}
