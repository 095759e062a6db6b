export { type SessionService, type AppendMessageOptions, type CompactionPreview, type PreviewOptions } from './SessionService.js';
export {
  SessionServiceEvents,
  type SessionServiceEventMap,
  type SessionServiceEventName,
  type CompactionSkipReason,
} from './SessionServiceEvents.js';
export { DefaultSessionService, type DefaultSessionServiceOptions } from './DefaultSessionService.js';
export { accessDeniedMessage } from './sessionAccess.js';
export {
  type CompactionHooks,
  type BeforeCompactionContext,
  type BeforeCompactionDecision,
  type AfterCompactionContext,
} from './CompactionHooks.js';
export {
  compactionStatsHooks,
  compactionStatsOf,
  COMPACTION_STATS_METADATA,
  type CompactionStats,
  type MetadataUpdater,
} from './compactionStats.js';
