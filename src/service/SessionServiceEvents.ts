import { EventEmitter } from 'node:events';
import type { CompactionResult } from '../compaction/CompactionResult.js';

export type CompactionSkipReason =
  'trigger-not-fired' | 'nothing-to-archive' | 'cas-conflict' | 'summarization-failed' | 'pinned-event' | 'vetoed';

export interface SessionServiceEventMap {
  /** The trigger fired and the strategy is about to run (before any summariser call). */
  compactionStarted: { sessionId: string };
  compactionCompleted: { sessionId: string; result: CompactionResult; rebased: boolean };
  compactionSkipped: { sessionId: string; reason: CompactionSkipReason };
  /** The strategy or the repository threw; the error is re-thrown to the caller too. */
  compactionFailed: { sessionId: string; error: unknown };
}

export type SessionServiceEventName = keyof SessionServiceEventMap;

/**
 * A typed facade over EventEmitter for compaction lifecycle events, so apps can log, meter and notify.
 * A throwing listener is isolated: it never breaks a compaction.
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
