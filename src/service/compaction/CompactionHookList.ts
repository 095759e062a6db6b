import { requireHooks, runAfterHooks, runBeforeHooks, type CompactionHooks } from '../CompactionHooks.js';
import { isCompactionStatsHooks } from '../compactionStats.js';
import type { Logger } from '../../logging.js';
import type { CompactionResult } from '../../compaction/CompactionResult.js';
import type { Session } from '../../session/Session.js';
import type { SessionEvent } from '../../session/SessionEvent.js';

/**
 * The service's compaction hooks, in registration order. The default stats hooks (`recordCompactionStats`)
 * come first and give way to stats hooks registered explicitly, so the totals are recorded once.
 */
export class CompactionHookList {
  private readonly hooks: CompactionHooks[];
  private defaultStatsHooks: CompactionHooks | undefined;

  constructor(
    hooks: CompactionHooks | readonly CompactionHooks[] | undefined,
    statsHooks: (() => CompactionHooks) | undefined,
    private readonly logger: Logger,
  ) {
    const given = hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks as CompactionHooks];
    this.hooks = given.map(requireHooks);
    if (statsHooks !== undefined && !this.hooks.some(isCompactionStatsHooks)) {
      this.defaultStatsHooks = statsHooks();
      this.hooks.unshift(this.defaultStatsHooks);
    }
  }

  /** Registers hooks after those already there; returns a function that removes them. */
  add(hooks: CompactionHooks): () => void {
    const h = requireHooks(hooks);
    if (isCompactionStatsHooks(h) && this.defaultStatsHooks !== undefined) {
      this.hooks.splice(this.hooks.indexOf(this.defaultStatsHooks), 1);
      this.defaultStatsHooks = undefined;
    }
    this.hooks.push(h);
    return () => {
      const i = this.hooks.indexOf(h);
      if (i >= 0) this.hooks.splice(i, 1);
    };
  }

  /** The `beforeCompaction` hooks' combined decision: a veto, or extra summary instructions. */
  before(sessionId: string, session: Session, events: readonly SessionEvent[]) {
    return runBeforeHooks(this.hooks, { sessionId, session, events }, this.logger);
  }

  /** Runs the `afterCompaction` hooks of a committed compaction (their errors are logged, never thrown). */
  async after(sessionId: string, window: readonly SessionEvent[], result: CompactionResult): Promise<void> {
    if (this.hooks.length === 0) return;
    const before = new Set(window.map((e) => e.id));
    const summaryEvents = result.compactedEvents.filter((e) => e.isSynthetic() && !before.has(e.id));
    await runAfterHooks(this.hooks, { sessionId, result, archivedEvents: result.archivedEvents, summaryEvents }, this.logger);
  }
}
