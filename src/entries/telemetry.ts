// 'session-compaction/telemetry': observability — OpenTelemetry spans and metrics, and compaction statistics
// kept in session metadata.
export {
  configureTelemetry,
  INSTRUMENTATION_SCOPE,
  TELEMETRY_ATTRIBUTES,
  TELEMETRY_METRICS,
  TELEMETRY_SPANS,
  type TelemetryOptions,
} from '../telemetry/index.js';
export { compactionStatsHooks, compactionStatsOf, type CompactionStats } from '../service/compactionStats.js';
