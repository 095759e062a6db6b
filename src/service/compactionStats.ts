import type { Session } from '../session/Session.js';
import type { CompactionHooks } from './CompactionHooks.js';

/** Session metadata key of the running totals kept by `compactionStatsHooks`. */
export const COMPACTION_STATS_METADATA = 'compactionStats';

/** Running totals of a session's committed compactions (how often a session was compacted and what it saved). */
export interface CompactionStats {
  count: number;
  eventsArchived: number;
  tokensSaved: number;
  /** ISO-8601 time of the last committed compaction. */
  lastCompactedAt: string;
}

/** What the hooks need: the service's read-modify-write of session metadata. */
export interface MetadataUpdater {
  updateMetadata(
    sessionId: string,
    update: (metadata: Readonly<Record<string, unknown>>) => Record<string, unknown>,
  ): Promise<Session>;
}

/** The totals recorded in `session.metadata`, or zeros. */
export function compactionStatsOf(session: Pick<Session, 'metadata'>): CompactionStats {
  const raw = session.metadata[COMPACTION_STATS_METADATA] as Partial<CompactionStats> | undefined;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return {
    count: n(raw?.count),
    eventsArchived: n(raw?.eventsArchived),
    tokensSaved: n(raw?.tokensSaved),
    lastCompactedAt: typeof raw?.lastCompactedAt === 'string' ? raw.lastCompactedAt : '',
  };
}

const statsHooks = new WeakSet<CompactionHooks>();

/** Hooks made by `compactionStatsHooks` (a service records the stats once, whoever registered them). */
export function isCompactionStatsHooks(hooks: CompactionHooks): boolean {
  return statsHooks.has(hooks);
}

/**
 * Hooks that keep `session.metadata.compactionStats` current after every committed compaction (`count`
 * compactions so far, `tokensSaved` their cumulative savings). DefaultSessionService registers them
 * with `recordCompactionStats: true`; registering your own, e.g. with another clock, replaces those. The
 * update is atomic when the repository has `updateSessionMetadata` (every built-in one does); with a custom
 * repository without it, two processes compacting one session at the same instant may lose an increment.
 */
export function compactionStatsHooks(service: MetadataUpdater, now: () => Date = () => new Date()): CompactionHooks {
  const hooks: CompactionHooks = {
    afterCompaction: async ({ sessionId, result }) => {
      await service.updateMetadata(sessionId, (metadata) => {
        const stats = compactionStatsOf({ metadata });
        const next: CompactionStats = {
          count: stats.count + 1,
          eventsArchived: stats.eventsArchived + result.archivedEvents.length,
          tokensSaved: stats.tokensSaved + Math.max(0, result.tokensEstimatedSaved),
          lastCompactedAt: now().toISOString(),
        };
        return { ...metadata, [COMPACTION_STATS_METADATA]: next };
      });
    },
  };
  statsHooks.add(hooks);
  return hooks;
}
