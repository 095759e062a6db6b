// 'session-compaction/telemetry': observability — OpenTelemetry spans and metrics, and compaction statistics
// kept in session metadata.
export { ATTR as TELEMETRY_ATTRIBUTES, METRIC as TELEMETRY_METRICS, SPAN as TELEMETRY_SPANS } from './attributes.js';
export { configureTelemetry, INSTRUMENTATION_SCOPE, type TelemetryOptions } from './telemetry.js';
export { compactionStatsHooks, compactionStatsOf, type CompactionStats } from '../service/compactionStats.js';
