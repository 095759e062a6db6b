import type { CompactionRecord, CompactionRecordRange } from '../../repository/CompactionRecord.js';
import { SessionEvent } from '../../session/SessionEvent.js';

export interface CompactionRecordInput {
  id: string;
  sessionId: string;
  createdAt: Date;
  strategy: string;
  /** The trigger's name, kept in the record. */
  trigger?: string;
  versionBefore: number;
  /** The active window the compaction is committed against (for a rebase: the window at commit time). */
  windowBefore: readonly SessionEvent[];
  archived: readonly SessionEvent[];
  retained: readonly SessionEvent[];
  range: CompactionRecordRange | null;
}

/** What a committed compaction changed, derived from the window before and the committed result. */
export function buildCompactionRecord(input: CompactionRecordInput): CompactionRecord {
  const before = new Set(input.windowBefore.map((e) => e.id));
  const after = new Set(input.retained.map((e) => e.id));
  const archived = new Set(input.archived.map((e) => e.id));
  const added = input.retained.filter((e) => !before.has(e.id));
  const source = added.map((e) => e.metadata[SessionEvent.METADATA_COMPACTION_SOURCE]).find((s) => typeof s === 'string');
  return {
    id: input.id,
    sessionId: input.sessionId,
    createdAt: input.createdAt,
    strategy: input.strategy,
    ...(input.trigger !== undefined ? { trigger: input.trigger } : {}),
    compactionSource: typeof source === 'string' ? source : null,
    versionBefore: input.versionBefore,
    versionAfter: input.versionBefore + 1,
    windowBefore: input.windowBefore.map((e) => e.id),
    windowAfter: input.retained.map((e) => e.id),
    archivedEventIds: [...archived],
    addedEventIds: added.map((e) => e.id),
    // What leaves the log altogether (superseded summaries): the record is the only place it survives.
    removedEvents: input.windowBefore.filter((e) => !after.has(e.id) && !archived.has(e.id)),
    range: input.range,
    revertedAt: null,
  };
}
