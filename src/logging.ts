import { createRequire } from 'node:module';
import type winston from 'winston';

// Loaded at the first default logger, not at import: an application that binds its own logger never loads winston.
const load = (): typeof winston => createRequire(import.meta.url)('winston') as typeof winston;

/** The subset of a winston logger the library uses; any winston logger (or a compatible one) fits. */
export interface Logger {
  error(message: string, meta?: Record<string, unknown>): unknown;
  warn(message: string, meta?: Record<string, unknown>): unknown;
  info(message: string, meta?: Record<string, unknown>): unknown;
  debug(message: string, meta?: Record<string, unknown>): unknown;
}

/**
 * The default logger: winston at `warn`, to stderr. The library writes nowhere else, so an app that binds
 * its own logger (or sets `silent`) controls every line the library emits.
 */
export function createDefaultLogger(options: { level?: string; silent?: boolean } = {}): winston.Logger {
  const w = load();
  return w.createLogger({
    level: options.level ?? 'warn',
    silent: options.silent ?? false,
    defaultMeta: { library: 'session-compaction' },
    format: w.format.combine(w.format.timestamp(), w.format.json()),
    transports: [new w.transports.Console({ stderrLevels: ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] })],
  });
}

let shared: winston.Logger | undefined;

export function defaultLogger(): winston.Logger {
  shared ??= createDefaultLogger();
  return shared;
}
