import { SUMMARY_METADATA } from '../compaction/strategies/summaryEvents.js';
import type { SessionEvent } from '../session/SessionEvent.js';

/**
 * Whether `event` is a summary that recall should not quote because the events it stands for can be quoted
 * instead: compaction archives, it never deletes, so an archived summary (superseded by a consolidation, or
 * the window's older checkpoint) repeats in fewer words what the log still holds word for word. Quoting it
 * spends the block's budget twice on the same turns, and loses their wording and times. A summary whose
 * originals are gone (an archive purge) is all that is left of them, and stays quotable.
 *
 * `recallable(id)`: whether the event with that id is in the log and may be quoted by this request.
 */
export function summarisesRecallable(event: SessionEvent, recallable: (id: string) => boolean): boolean {
  if (!event.isSynthetic()) return false;
  const ids = event.metadata[SUMMARY_METADATA.eventIds];
  if (!Array.isArray(ids)) return false;
  return ids.some((id) => typeof id === 'string' && recallable(id));
}
