import type { SessionEvent } from './SessionEvent.js';

/**
 * Events read back from a store that did not meet the model's rules (written by an older release that
 * validated less): they are readable, with the bad parts replaced (a non-string text reads as no text), and
 * what was wrong is remembered here, per event instance, for the coverage verifier to report.
 */
const problems = new WeakMap<SessionEvent, readonly string[]>();

export function markMalformed(event: SessionEvent, found: readonly string[]): SessionEvent {
  if (found.length > 0) problems.set(event, Object.freeze([...found]));
  return event;
}

/** What was wrong with this event as stored; empty for a well-formed one. */
export function malformedProblems(event: SessionEvent): readonly string[] {
  return problems.get(event) ?? [];
}
