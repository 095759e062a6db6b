import { InvalidArgumentError } from '../errors.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { decodeEvent, encodeEvent, type StoredEvent } from './eventCodec.js';

/** The explicit range a compaction was limited to, as resolved (snapped) at compaction time. */
export interface CompactionRecordRange {
  fromEventId: string;
  toEventId: string;
}

/**
 * One committed compaction as an identifiable, revertible unit: an overlay kept beside the log, so undoing it
 * never rewrites the log itself.
 * Written in the same atomic step as the compaction itself, so a compaction that lost its CAS records nothing.
 * It holds everything a revert needs that the log no longer has: the order of the window before, and the
 * events the compaction removed (superseded summaries), whose content is gone from the log.
 */
export interface CompactionRecord {
  readonly id: string;
  readonly sessionId: string;
  readonly createdAt: Date;
  /** The strategy's class name (or 'function' for a plain function strategy). */
  readonly strategy: string;
  /**
   * The trigger's class name (a function trigger's name, or 'function'), as for `strategy`; absent on records
   * written before the trigger was recorded.
   */
  readonly trigger?: string;
  /** `metadata.compactionSource` of the summary events the compaction added; null when it added none. */
  readonly compactionSource: string | null;
  /** The log version the compaction was committed against, and the one it produced (versionBefore + 1). */
  readonly versionBefore: number;
  readonly versionAfter: number;
  /** Ids of the active window before the compaction, in log order. */
  readonly windowBefore: readonly string[];
  /** Ids of the active window the compaction committed, in log order. */
  readonly windowAfter: readonly string[];
  /** Ids of the events it archived (covered). */
  readonly archivedEventIds: readonly string[];
  /** Ids of the events it added to the window: summaries, masked copies. */
  readonly addedEventIds: readonly string[];
  /** Events of the window before that it removed (superseded summaries), as they were: a revert restores them. */
  readonly removedEvents: readonly SessionEvent[];
  /** The explicit range the compaction was limited to; null for a whole-window compaction. */
  readonly range: CompactionRecordRange | null;
  /** When it was reverted; null while it stands. A reverted record is kept for audit. */
  readonly revertedAt: Date | null;
}

/**
 * A compaction record without its id arrays: what a listing needs (who compacted, when, how much, whether it
 * was reverted) at a size independent of the window. A session of 200k events carries ~15 MB of ids in its
 * records; their summaries a few hundred bytes each. The counts are the lengths of the arrays left out.
 */
export interface CompactionRecordSummary {
  readonly id: string;
  readonly sessionId: string;
  readonly createdAt: Date;
  /** As CompactionRecord.strategy. */
  readonly strategy: string;
  /** As CompactionRecord.trigger; absent on records written before the trigger was recorded. */
  readonly trigger?: string;
  readonly compactionSource: string | null;
  readonly versionBefore: number;
  readonly versionAfter: number;
  /** `windowBefore.length` of the record. */
  readonly windowBeforeCount: number;
  /** `windowAfter.length` of the record. */
  readonly windowAfterCount: number;
  /** `archivedEventIds.length` of the record. */
  readonly archivedEventCount: number;
  /** `addedEventIds.length` of the record. */
  readonly addedEventCount: number;
  /** `removedEvents.length` of the record. */
  readonly removedEventCount: number;
  readonly range: CompactionRecordRange | null;
  readonly revertedAt: Date | null;
}

/** The fields of a record's storage form that a summary leaves out (each an array, counted instead). */
export const COMPACTION_RECORD_ARRAYS = Object.freeze({
  windowBefore: 'windowBeforeCount',
  windowAfter: 'windowAfterCount',
  archivedEventIds: 'archivedEventCount',
  addedEventIds: 'addedEventCount',
  removedEvents: 'removedEventCount',
} as const);

/**
 * The storage form of a summary: the record's storage form with each array of COMPACTION_RECORD_ARRAYS replaced
 * by its count. The durable backends build it in the store (SQL JSON functions, a Redis field written with the
 * record), so a listing never moves the ids.
 */
export interface StoredCompactionSummary {
  id: string;
  sessionId: string;
  createdAt: number;
  strategy: string;
  trigger?: string;
  compactionSource: string | null;
  versionBefore: number;
  versionAfter: number;
  windowBeforeCount: number;
  windowAfterCount: number;
  archivedEventCount: number;
  addedEventCount: number;
  removedEventCount: number;
  range: CompactionRecordRange | null;
}

/** The summary of a whole record (a repository without a light listing, the in-memory one). */
export function summarizeCompactionRecord(record: CompactionRecord): CompactionRecordSummary {
  return Object.freeze({
    id: record.id,
    sessionId: record.sessionId,
    createdAt: record.createdAt,
    strategy: record.strategy,
    ...(record.trigger !== undefined ? { trigger: record.trigger } : {}),
    compactionSource: record.compactionSource,
    versionBefore: record.versionBefore,
    versionAfter: record.versionAfter,
    windowBeforeCount: record.windowBefore.length,
    windowAfterCount: record.windowAfter.length,
    archivedEventCount: record.archivedEventIds.length,
    addedEventCount: record.addedEventIds.length,
    removedEventCount: record.removedEvents.length,
    range: record.range === null ? null : Object.freeze({ ...record.range }),
    revertedAt: record.revertedAt,
  });
}

/** The storage form of `record`'s summary (what Redis writes beside the record). */
export function encodeCompactionSummary(record: CompactionRecord): string {
  const { revertedAt: _, createdAt, range, ...rest } = summarizeCompactionRecord(record);
  const stored: StoredCompactionSummary = {
    ...rest,
    createdAt: createdAt.getTime(),
    range: range === null ? null : { ...range },
  };
  return JSON.stringify(stored);
}

/** A summary from its storage form (text, or the object a driver already parsed). */
export function decodeCompactionSummary(
  body: string | StoredCompactionSummary,
  revertedAt: Date | number | null,
): CompactionRecordSummary {
  const s = typeof body === 'string' ? (JSON.parse(body) as StoredCompactionSummary) : body;
  return Object.freeze({
    id: s.id,
    sessionId: s.sessionId,
    createdAt: new Date(s.createdAt),
    strategy: s.strategy,
    ...(typeof s.trigger === 'string' ? { trigger: s.trigger } : {}),
    compactionSource: s.compactionSource,
    versionBefore: s.versionBefore,
    versionAfter: s.versionAfter,
    windowBeforeCount: s.windowBeforeCount,
    windowAfterCount: s.windowAfterCount,
    archivedEventCount: s.archivedEventCount,
    addedEventCount: s.addedEventCount,
    removedEventCount: s.removedEventCount,
    range: s.range === null || s.range === undefined ? null : Object.freeze({ ...s.range }),
    revertedAt: revertedAt === null ? null : new Date(revertedAt),
  });
}

interface StoredRecord {
  id: string;
  sessionId: string;
  createdAt: number;
  strategy: string;
  trigger?: string;
  compactionSource: string | null;
  versionBefore: number;
  versionAfter: number;
  windowBefore: string[];
  windowAfter: string[];
  archivedEventIds: string[];
  addedEventIds: string[];
  removedEvents: StoredEvent[];
  range: CompactionRecordRange | null;
}

/** The storage form shared by the durable backends: one JSON document, without the reverted mark (its own column/field). */
export function encodeCompactionRecord(record: CompactionRecord): string {
  const stored: StoredRecord = {
    id: record.id,
    sessionId: record.sessionId,
    createdAt: record.createdAt.getTime(),
    strategy: record.strategy,
    ...(record.trigger !== undefined ? { trigger: record.trigger } : {}),
    compactionSource: record.compactionSource,
    versionBefore: record.versionBefore,
    versionAfter: record.versionAfter,
    windowBefore: [...record.windowBefore],
    windowAfter: [...record.windowAfter],
    archivedEventIds: [...record.archivedEventIds],
    addedEventIds: [...record.addedEventIds],
    removedEvents: record.removedEvents.map((e) => encodeEvent(e)),
    range: record.range === null ? null : { ...record.range },
  };
  return JSON.stringify(stored);
}

export function decodeCompactionRecord(body: string, revertedAt: Date | number | null): CompactionRecord {
  const s = JSON.parse(body) as StoredRecord;
  return freezeRecord({
    id: s.id,
    sessionId: s.sessionId,
    createdAt: new Date(s.createdAt),
    strategy: s.strategy,
    ...(typeof s.trigger === 'string' ? { trigger: s.trigger } : {}),
    compactionSource: s.compactionSource,
    versionBefore: s.versionBefore,
    versionAfter: s.versionAfter,
    windowBefore: s.windowBefore,
    windowAfter: s.windowAfter,
    archivedEventIds: s.archivedEventIds,
    addedEventIds: s.addedEventIds,
    removedEvents: s.removedEvents.map(decodeEvent),
    range: s.range,
    revertedAt: revertedAt === null ? null : new Date(revertedAt),
  });
}

export function freezeRecord(record: CompactionRecord): CompactionRecord {
  return Object.freeze({
    ...record,
    windowBefore: Object.freeze([...record.windowBefore]),
    windowAfter: Object.freeze([...record.windowAfter]),
    archivedEventIds: Object.freeze([...record.archivedEventIds]),
    addedEventIds: Object.freeze([...record.addedEventIds]),
    removedEvents: Object.freeze([...record.removedEvents]),
    range: record.range === null ? null : Object.freeze({ ...record.range }),
  });
}

/** A record handed to a repository: of this session, with an id. */
export function requireRecordOf(sessionId: string, record: CompactionRecord): CompactionRecord {
  if (record === null || typeof record !== 'object') throw new InvalidArgumentError('record must not be null');
  if (record.sessionId !== sessionId)
    throw new InvalidArgumentError(`compaction record belongs to session ${record.sessionId}, not ${sessionId}`);
  if (typeof record.id !== 'string' || record.id.trim() === '') throw new InvalidArgumentError('record id must not be empty');
  return record;
}

/** Newest first: versions only grow within a session, so versionAfter orders compactions. */
export function newestFirst<T extends { readonly versionAfter: number }>(records: readonly T[]): T[] {
  return [...records].sort((a, b) => b.versionAfter - a.versionAfter);
}

/** Records that archived any of `purgedIds` (retention removed what they would restore). */
export function recordsCovering(records: readonly CompactionRecord[], purgedIds: ReadonlySet<string>): CompactionRecord[] {
  return records.filter((r) => r.archivedEventIds.some((id) => purgedIds.has(id)));
}

/** The SQL schema version (SQLite and PostgreSQL) that adds compaction records. */
export const COMPACTION_RECORD_SCHEMA_VERSION = 4;

/**
 * The SQL schema version (SQLite and PostgreSQL) that stores each record's summary (CompactionRecordSummary's
 * storage form) beside its body, written with the record: a light listing reads it instead of parsing every
 * body (measured: parsing the body of a 100,000-event compaction costs more than a listing should). Rows written
 * before keep NULL and are summarised in the store when listed.
 */
export const COMPACTION_SUMMARY_SCHEMA_VERSION = 11;
