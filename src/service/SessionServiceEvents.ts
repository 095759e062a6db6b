import { EventEmitter } from 'node:events';
import type { CompactionResult } from '../compaction/CompactionResult.js';
import type { CompactionRecordRange } from '../repository/CompactionRecord.js';
import type { ErasureReason } from './lifecycle/reports.js';

export type CompactionSkipReason =
  | 'trigger-not-fired'
  | 'nothing-to-archive'
  | 'cas-conflict'
  | 'summarization-failed'
  | 'deferred'
  | 'pinned-event'
  | 'vetoed'
  | 'empty-range'
  | 'lock-held'
  | 'lock-lost';

export interface SessionServiceEventMap {
  /** The trigger fired and the strategy is about to run (before any summariser call). */
  compactionStarted: { sessionId: string };
  /**
   * `compactionId`: the record of the compaction, when the repository keeps compaction records. `range`: for a
   * compaction limited to a range, the range as resolved (the same as the record's, even when none is kept).
   */
  compactionCompleted: {
    sessionId: string;
    result: CompactionResult;
    rebased: boolean;
    compactionId?: string;
    range?: CompactionRecordRange;
    /**
     * The log version the compaction was committed against (it is one more after it): with `result`, what an
     * in-process index needs to follow the compaction without reading the log.
     */
    versionBefore?: number;
  };
  /** A compaction was reverted: the active window changed (derived indexes must follow). */
  compactionReverted: { sessionId: string; compactionId: string; restoredEventIds: readonly string[] };
  compactionSkipped: { sessionId: string; reason: CompactionSkipReason };
  /** The strategy or the repository threw; the error is re-thrown to the caller too. */
  compactionFailed: { sessionId: string; error: unknown };
  /**
   * A session and its whole log are gone (delete, eraseUser, deleteExpiredSessions, retention). Whoever keeps
   * data derived from its events in process (a search index, an embedding cache) must drop it in the
   * listener, synchronously, and may report what it dropped with `forgotten(kind, count)`; the counts
   * appear in the ErasureReport's `derived`.
   */
  sessionErased: {
    sessionId: string;
    userId: string;
    reason: ErasureReason;
    forgotten: (kind: string, count: number) => void;
  };
  /**
   * These events were rewritten in place (a redaction, a regenerated summary): anything derived from their
   * old content is stale and must be dropped or rebuilt from the log.
   */
  eventsRewritten: { sessionId: string; eventIds: readonly string[]; reason: 'redaction' | 'regeneration' };
  /** Retention removed these archived events: drop what was derived from them. */
  eventsPurged: { sessionId: string; eventIds: readonly string[] };
}

export type SessionServiceEventName = keyof SessionServiceEventMap;

/** How the service's parts report an event: listener errors are handled (logged) by the service. */
export type EmitServiceEvent = <K extends SessionServiceEventName>(name: K, payload: SessionServiceEventMap[K]) => void;

/**
 * A typed facade over EventEmitter for compaction and data-lifecycle events, so apps can log, meter and
 * notify, and in-process indexes stay consistent with erasure and redaction. Listeners run synchronously;
 * a throwing listener is isolated: it never breaks the operation.
 */
export class SessionServiceEvents {
  private readonly emitter = new EventEmitter();

  on<K extends SessionServiceEventName>(name: K, listener: (payload: SessionServiceEventMap[K]) => void): () => void {
    this.emitter.on(name, listener);
    return () => this.emitter.off(name, listener);
  }

  once<K extends SessionServiceEventName>(name: K, listener: (payload: SessionServiceEventMap[K]) => void): void {
    this.emitter.once(name, listener);
  }

  off<K extends SessionServiceEventName>(name: K, listener: (payload: SessionServiceEventMap[K]) => void): void {
    this.emitter.off(name, listener);
  }

  /** Returns listener errors instead of throwing them, for the caller to log. */
  emit<K extends SessionServiceEventName>(name: K, payload: SessionServiceEventMap[K]): unknown[] {
    const errors: unknown[] = [];
    for (const listener of this.emitter.listeners(name)) {
      try {
        (listener as (p: SessionServiceEventMap[K]) => void)(payload);
      } catch (error) {
        errors.push(error);
      }
    }
    return errors;
  }
}
