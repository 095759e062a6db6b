import type { SessionEvent } from '../session/SessionEvent.js';
import type { CompactionRecord, CompactionRecordSummary } from './CompactionRecord.js';
import { hasMethods } from './hasMethods.js';

/**
 * A repository that keeps a record of every committed compaction, which makes compactions reversible. Its
 * `compactEvents` stores the optional fifth argument, the record, in the same atomic step as the compaction
 * (a lost CAS stores nothing). The service passes a record only to such a repository; without this
 * capability `listCompactions` / `revertCompaction` fail with "… is not supported by this repository".
 */
export interface CompactionRecordRepository {
  /** The session's compaction records, newest first, reverted ones included; [] when missing. */
  listCompactions(id: string): Promise<CompactionRecord[]>;
  /**
   * Optional: the same records as `listCompactions`, same order, as summaries (no id arrays, their counts),
   * slimmed in the store so the ids never cross the wire. Without it the service summarises
   * `listCompactions` (correct, but it reads every id).
   */
  listCompactionSummaries?(id: string): Promise<CompactionRecordSummary[]>;
  /**
   * `compactEvents(id, [], window, expectedVersion)` and, in the same atomic step, marks record
   * `compactionId` reverted at `revertedAt`. Events of `window` that sit in the archive move back to the window.
   */
  revertCompactionEvents(
    id: string,
    compactionId: string,
    window: readonly SessionEvent[],
    expectedVersion: number,
    revertedAt: Date,
  ): Promise<boolean>;
}

/** Whether `repository` is a CompactionRecordRepository: it has every one of its methods. */
export function isCompactionRecordRepository<R>(repository: R): repository is R & CompactionRecordRepository {
  return hasMethods(repository, ['listCompactions', 'revertCompactionEvents']);
}
