export { type SessionService, type AppendMessageOptions, type CompactionPreview, type PreviewOptions } from './SessionService.js';
export {
  SessionServiceEvents,
  type SessionServiceEventMap,
  type SessionServiceEventName,
  type CompactionSkipReason,
} from './SessionServiceEvents.js';
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
export { DefaultSessionService, DEFAULT_TOMBSTONE_TTL_MS, type DefaultSessionServiceOptions } from './DefaultSessionService.js';
export { DEFAULT_REDACTION_MARKER } from './lifecycle/EventRedactor.js';
export type {
  ErasureReason,
  ErasureReport,
  PurgeDerivedOptions,
  PurgeDerivedReport,
  RedactionReport,
  RedactOptions,
  RetentionOptions,
  RetentionPolicy,
  RetentionProgress,
  RetentionReport,
} from './lifecycle/reports.js';
