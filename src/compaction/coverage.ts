import { malformedProblems } from '../session/malformedEvents.js';
import type { SessionEvent } from '../session/SessionEvent.js';

/** Metadata key on a summary event: the ids of the original events it stands for. */
export const METADATA_COVERED_EVENT_IDS = 'coveredEventIds';
/** Metadata key on a masked copy: the id of the original (archived) event it replaces. */
export const METADATA_MASKED_FROM = 'maskedFrom';
/** Metadata key on a redacted event: `{ at: ISO instant, reason }`, the ledger's record of the redaction. */
export const METADATA_REDACTION = 'redaction';
/**
 * Metadata key on a summary event written before some of its sources were redacted: the redacted ids. Such a
 * summary may still hold the removed content until it is regenerated (next compaction, or purgeDerived).
 */
export const METADATA_TAINTED_BY = 'taintedBy';

export interface CoverageReport {
  /** Every original event is in the context exactly once: verbatim, summarised or masked. */
  ok: boolean;
  originals: number;
  verbatim: string[];
  summarized: string[];
  masked: string[];
  /** Archived and represented nowhere: dropped from the context (what mechanical strategies do). */
  uncovered: string[];
  /** Represented more than once (e.g. verbatim and in a summary, or in two summaries). */
  duplicated: string[];
  /**
   * Events that were stored malformed (by an older release that validated less) and read back repaired:
   * a non-string text as no text, malformed tool calls or responses left out. Not counted against `ok`.
   */
  malformed: Array<{ id: string; problems: readonly string[] }>;
  /** Original events whose content was redacted (they still count as covered: the marker stands for them). */
  redacted: string[];
  /** Summary events (the assistant halves) awaiting regeneration because a source was redacted. */
  tainted: string[];
}

/** The redacted event ids a summary was written from, or [] when it is not tainted. */
export function taintedBy(event: SessionEvent): readonly string[] {
  const ids = event.metadata[METADATA_TAINTED_BY];
  return Array.isArray(ids) ? ids.filter((x): x is string => typeof x === 'string') : [];
}

export function isRedacted(event: SessionEvent): boolean {
  const r = event.metadata[METADATA_REDACTION];
  return r !== null && typeof r === 'object';
}

export function coveredIds(event: SessionEvent): readonly string[] {
  const ids = event.metadata[METADATA_COVERED_EVENT_IDS];
  return Array.isArray(ids) ? ids.filter((x): x is string => typeof x === 'string') : [];
}

function isOriginal(event: SessionEvent): boolean {
  return !event.isSynthetic() && event.metadata[METADATA_MASKED_FROM] === undefined;
}

/**
 * Checks a session's whole log (archived included) against the coverage ledger: every non-synthetic event
 * ever appended must be in the active window verbatim, or covered by exactly one live summary, or replaced
 * by a masked copy whose original is archived.
 */
export function verifyCoverage(log: readonly SessionEvent[]): CoverageReport {
  const representations = new Map<string, number>();
  const summarized = new Set<string>();
  const masked = new Set<string>();
  const bump = (id: string) => representations.set(id, (representations.get(id) ?? 0) + 1);
  for (const e of log) {
    if (e.isArchived()) continue;
    // A summary pair carries its metadata on both events; the assistant half is the summary.
    const summaryIds = e.messageType === 'user' ? [] : coveredIds(e);
    for (const id of summaryIds) {
      bump(id);
      summarized.add(id);
    }
    const from = e.metadata[METADATA_MASKED_FROM];
    if (typeof from === 'string') {
      bump(from);
      masked.add(from);
    }
  }
  const report: CoverageReport = {
    ok: true,
    originals: 0,
    verbatim: [],
    summarized: [],
    masked: [],
    uncovered: [],
    duplicated: [],
    malformed: [],
    redacted: [],
    tainted: [],
  };
  for (const e of log) {
    const problems = malformedProblems(e);
    if (problems.length > 0) report.malformed.push({ id: e.id, problems });
  }
  for (const e of log) {
    if (e.isSynthetic() && e.messageType !== 'user' && taintedBy(e).length > 0) report.tainted.push(e.id);
    if (!isOriginal(e)) continue;
    if (isRedacted(e)) report.redacted.push(e.id);
    report.originals++;
    let count = representations.get(e.id) ?? 0;
    if (!e.isArchived()) {
      count++;
      report.verbatim.push(e.id);
    }
    if (summarized.has(e.id)) report.summarized.push(e.id);
    if (masked.has(e.id)) report.masked.push(e.id);
    if (count === 0) report.uncovered.push(e.id);
    if (count > 1) report.duplicated.push(e.id);
  }
  report.ok = report.uncovered.length === 0 && report.duplicated.length === 0;
  return report;
}
