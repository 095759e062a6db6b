import type { CompactionResult } from '../compaction/CompactionResult.js';
import { InvalidArgumentError } from '../errors.js';
import type { Logger } from '../logging.js';
import type { Session } from '../session/Session.js';
import type { SessionEvent } from '../session/SessionEvent.js';

/** What `beforeCompaction` sees: the trigger has fired, the strategy has not run yet. */
export interface BeforeCompactionContext {
  sessionId: string;
  session: Session;
  /** The active window the strategy is about to compact. */
  events: readonly SessionEvent[];
}

/** What `beforeCompaction` may answer; nothing (undefined) means "go ahead". */
export interface BeforeCompactionDecision {
  /** Stop this compaction: no strategy run, no write (skip reason 'vetoed'). */
  veto?: boolean;
  /** Why, for the log and the `compactionSkipped` event. */
  reason?: string;
  /** Extra instructions for this summary, e.g. "keep the open TODOs" (summarising strategies add them). */
  instructions?: string;
}

/** What `afterCompaction` sees: a committed compaction. */
export interface AfterCompactionContext {
  sessionId: string;
  result: CompactionResult;
  /** The events moved to the archive. */
  archivedEvents: readonly SessionEvent[];
  /** The synthetic events the compaction added to the window (a summary pair), if any. */
  summaryEvents: readonly SessionEvent[];
}

/**
 * Hooks around every compaction the service commits. Both are awaited; an error thrown by either is
 * logged and ignored (a throwing `beforeCompaction` does not veto), so a hook can never break compaction.
 */
export interface CompactionHooks {
  beforeCompaction?(
    context: BeforeCompactionContext,
  ): BeforeCompactionDecision | void | undefined | Promise<BeforeCompactionDecision | void | undefined>;
  afterCompaction?(context: AfterCompactionContext): void | Promise<void>;
}

export function requireHooks(value: unknown): CompactionHooks {
  if (value === null || typeof value !== 'object') throw new InvalidArgumentError('hooks must be an object');
  const hooks = value as CompactionHooks;
  for (const name of ['beforeCompaction', 'afterCompaction'] as const) {
    if (hooks[name] !== undefined && typeof hooks[name] !== 'function') {
      throw new InvalidArgumentError(`${name} must be a function`);
    }
  }
  return hooks;
}

/** Runs every `beforeCompaction` in order; the first veto wins, instructions accumulate. */
export async function runBeforeHooks(
  hooks: readonly CompactionHooks[],
  context: BeforeCompactionContext,
  logger: Logger,
): Promise<{ veto: false; instructions: string[] } | { veto: true; reason: string | undefined }> {
  const instructions: string[] = [];
  for (const hook of hooks) {
    if (hook.beforeCompaction === undefined) continue;
    let decision: BeforeCompactionDecision | void | undefined;
    try {
      decision = await hook.beforeCompaction(context);
    } catch (error) {
      logger.warn('beforeCompaction threw; ignored', { sessionId: context.sessionId, error: String(error) });
      continue;
    }
    if (decision === undefined || decision === null) continue;
    if (decision.veto === true) return { veto: true, reason: decision.reason };
    if (typeof decision.instructions === 'string' && decision.instructions.trim() !== '') {
      instructions.push(decision.instructions.trim());
    }
  }
  return { veto: false, instructions };
}

export async function runAfterHooks(
  hooks: readonly CompactionHooks[],
  context: AfterCompactionContext,
  logger: Logger,
): Promise<void> {
  for (const hook of hooks) {
    if (hook.afterCompaction === undefined) continue;
    try {
      await hook.afterCompaction(context);
    } catch (error) {
      logger.warn('afterCompaction threw; ignored', { sessionId: context.sessionId, error: String(error) });
    }
  }
}
