import { coveredIds, METADATA_MASKED_FROM, planToolPairing, toolExchangeOf, verifyCoverage } from 'session-compaction/spi';
import type { SessionSnapshot } from './sessionSnapshot.js';

export type ViolationKind =
  | 'duplicate-event-id'
  | 'coverage-duplicated'
  | 'coverage-dangling'
  | 'version-too-low'
  | 'orphaned-tool-result'
  | 'foreign-event'
  | 'unstable-read';

export interface Violation {
  kind: ViolationKind;
  message: string;
  eventIds: string[];
}

export interface SessionVerification {
  sessionId: string;
  ok: boolean;
  version: number;
  events: number;
  archived: number;
  active: number;
  coverage: {
    originals: number;
    verbatim: number;
    summarized: number;
    masked: number;
    /** Archived and represented nowhere in the window: what mechanical strategies drop by design. */
    uncovered: number;
  };
  violations: Violation[];
}

const MAX_IDS = 20;

function violation(kind: ViolationKind, message: string, ids: readonly string[]): Violation {
  return {
    kind,
    message: ids.length > MAX_IDS ? `${message} (first ${MAX_IDS} of ${ids.length} listed)` : message,
    eventIds: ids.slice(0, MAX_IDS),
  };
}

/**
 * Checks one session's invariants:
 * - every event id occurs once in the log, and every event belongs to the session;
 * - coverage ledger: no original event is represented twice in the active window (verbatim and in a summary,
 *   or in two summaries), and no summary or masked copy points at an id the log does not hold. An archived
 *   event represented nowhere is reported (`coverage.uncovered`) but is no violation: sliding windows drop
 *   context by design;
 * - CAS version: every original event was appended and each append added 1, so the version is at least the
 *   number of originals;
 * - no tool result in the active window answers a call that is not earlier in the window (a provider
 *   rejects such a context).
 */
export function verifySnapshot(snapshot: SessionSnapshot): SessionVerification {
  const { session, version, events } = snapshot;
  const violations: Violation[] = [];

  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const e of events) (seen.has(e.id) ? duplicates : seen).add(e.id);
  if (duplicates.size > 0)
    violations.push(violation('duplicate-event-id', 'event ids occur more than once in the log', [...duplicates]));

  const foreign = events.filter((e) => e.sessionId !== session.id).map((e) => e.id);
  if (foreign.length > 0)
    violations.push(violation('foreign-event', `events of another session in the log of ${session.id}`, foreign));

  const coverage = verifyCoverage(events);
  if (coverage.duplicated.length > 0) {
    violations.push(
      violation('coverage-duplicated', 'original events represented more than once in the active window', coverage.duplicated),
    );
  }
  const dangling = new Set<string>();
  for (const e of events) {
    if (e.isArchived()) continue;
    for (const id of e.messageType === 'user' ? [] : coveredIds(e)) if (!seen.has(id)) dangling.add(id);
    const from = e.metadata[METADATA_MASKED_FROM];
    if (typeof from === 'string' && !seen.has(from)) dangling.add(from);
  }
  if (dangling.size > 0) {
    violations.push(
      violation('coverage-dangling', 'summaries or masked copies refer to events the log does not hold', [...dangling]),
    );
  }

  if (!Number.isInteger(version) || version < coverage.originals) {
    violations.push(
      violation(
        'version-too-low',
        `version ${version} is lower than the ${coverage.originals} appended events it must count`,
        [],
      ),
    );
  }

  const active = events.filter((e) => !e.isArchived());
  // The library's pairing rule: a result with no call before it is what a provider rejects.
  const pairing = planToolPairing(active.map((e) => toolExchangeOf(e.message)));
  const orphans = active.filter((_, i) => pairing.results[i]!.includes('orphan')).map((e) => e.id);
  if (orphans.length > 0) {
    violations.push(
      violation('orphaned-tool-result', 'tool results in the active window whose call is not earlier in it', [
        ...new Set(orphans),
      ]),
    );
  }

  if (!snapshot.stable)
    violations.push(violation('unstable-read', 'the session kept changing while it was read; verify again', []));

  return {
    sessionId: session.id,
    ok: violations.length === 0,
    version,
    events: events.length,
    archived: events.length - active.length,
    active: active.length,
    coverage: {
      originals: coverage.originals,
      verbatim: coverage.verbatim.length,
      summarized: coverage.summarized.length,
      masked: coverage.masked.length,
      uncovered: coverage.uncovered.length,
    },
    violations,
  };
}
