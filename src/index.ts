export { InvalidArgumentError, IllegalStateError, RepositoryConnectionError, type RepositoryBackend } from './errors.js';
export { createDefaultLogger, type Logger } from './logging.js';
export * from './telemetry/index.js';

export * from './session/index.js';
export * from './filter/index.js';
export * from './service/index.js';
export * from './repository/index.js';
export * from './compaction/index.js';
export * from './tokens/index.js';
export * from './summarization/index.js';
export * from './recall/index.js';
export * from './di/index.js';
export * from './integration/index.js';
