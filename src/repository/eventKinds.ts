import { SessionEvent } from '../session/SessionEvent.js';

/** Metadata key of a masked copy (kept in sync with compaction/coverage.ts, which sits above this layer). */
const MASKED_FROM = 'maskedFrom';

/** Events of a log by kind; every event is exactly one kind. */
export interface EventKindCounts {
  /** Original events of the active window. */
  activeEvents: number;
  /** Original events of the archive. */
  archivedEvents: number;
  /** Synthetic events: summary pairs (both halves) and other compaction output. */
  summaries: number;
  /** Masked copies standing in for archived originals (observation masking, content policies). */
  maskedCopies: number;
}

export type EventKind = keyof EventKindCounts;

/** The kind an event counts as in erasure reports. */
export function eventKind(event: Pick<SessionEvent, 'archived' | 'metadata'>): EventKind {
  if (event.metadata[SessionEvent.METADATA_SYNTHETIC] === true) return 'summaries';
  if (typeof event.metadata[MASKED_FROM] === 'string') return 'maskedCopies';
  return event.archived ? 'archivedEvents' : 'activeEvents';
}

export function emptyKindCounts(): EventKindCounts {
  return { activeEvents: 0, archivedEvents: 0, summaries: 0, maskedCopies: 0 };
}

export function countKinds(events: Iterable<Pick<SessionEvent, 'archived' | 'metadata'>>): EventKindCounts {
  const counts = emptyKindCounts();
  for (const e of events) counts[eventKind(e)]++;
  return counts;
}
