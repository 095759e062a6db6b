export { ATTR as TELEMETRY_ATTRIBUTES, METRIC as TELEMETRY_METRICS, SPAN as TELEMETRY_SPANS } from './attributes.js';
export { configureTelemetry, INSTRUMENTATION_SCOPE, type TelemetryOptions } from './telemetry.js';
