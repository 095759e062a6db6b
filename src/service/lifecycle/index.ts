// 'session-compaction/lifecycle': the options, policies and reports of the data-lifecycle operations of
// SessionService (delete, eraseUser, redactEvent, purgeDerived, applyRetention).
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
} from './reports.js';
export { DEFAULT_TOMBSTONE_TTL_MS } from '../DefaultSessionService.js';
