import { SpanKind, type Span } from '@opentelemetry/api';
import { ATTR } from '../telemetry/attributes.js';
import { instruments, recordError, secondsSince, telemetryEnabled, tracer } from '../telemetry/telemetry.js';
import type { SessionRepository } from './SessionRepository.js';

const INSTRUMENTED = Symbol.for('session-compaction.instrumented-repository');

/** `db.system.name` of the built-in backends; anything else is 'other'. */
const SYSTEMS: Record<string, string> = {
  SqliteSessionRepository: 'sqlite',
  PostgresSessionRepository: 'postgresql',
  RedisSessionRepository: 'redis',
  InMemorySessionRepository: 'memory',
};

/** Operations whose first argument is a session id. */
const BY_SESSION_ID = new Set([
  'findById',
  'updateSessionMetadata',
  'delete',
  'getEventVersion',
  'getEventLogState',
  'findEvents',
  'compactEvents',
  'appendEvents',
  'searchEvents',
  'findEventNeighbours',
  'eraseSession',
  'findTombstone',
  'rewriteEvents',
  'purgeArchivedEvents',
  'listCompactions',
  'listCompactionSummaries',
  'revertCompactionEvents',
]);

function sessionIdOf(operation: string, args: readonly unknown[]): string | undefined {
  const first = args[0];
  if (BY_SESSION_ID.has(operation)) return typeof first === 'string' ? first : undefined;
  const field =
    operation === 'appendEvent'
      ? 'sessionId'
      : operation === 'save' || operation === 'saveIfAbsent' || operation === 'recreateSession'
        ? 'id'
        : operation === 'forkSession'
          ? 'sourceId'
          : null;
  if (field === null || first === null || typeof first !== 'object') return undefined;
  const value = (first as Record<string, unknown>)[field];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The repository with a span (`repository.<operation>`, `db.system.name`, `db.operation.name`, the session id)
 * and a `db.client.operation.duration` measurement around every method call, capability and backend-specific
 * methods included. It has exactly the repository's methods, so a capability guard answers for it as for the
 * repository; everything else (properties, `instanceof`) is the repository's own. The service wraps its
 * repository with this; wrapping twice is a no-op.
 */
export function instrumentRepository<R extends SessionRepository>(repository: R): R {
  if ((repository as unknown as Record<symbol, unknown>)[INSTRUMENTED] === true) return repository;
  const system = SYSTEMS[repository.constructor?.name ?? ''] ?? 'other';
  const kind = system === 'memory' ? SpanKind.INTERNAL : SpanKind.CLIENT;
  const wrapped = new Map<PropertyKey, unknown>();

  const wrap = (operation: string, method: (...args: unknown[]) => unknown) => {
    const name = `repository.${operation}`;
    const attributes = { [ATTR.DB_SYSTEM_NAME]: system, [ATTR.DB_OPERATION_NAME]: operation };
    const options = { kind, attributes };
    return function instrumented(this: unknown, ...args: unknown[]): unknown {
      if (!telemetryEnabled()) return method.apply(repository, args);
      const span: Span = tracer().startSpan(name, options);
      const recording = span.isRecording();
      // Without an SDK (no-op span, no meter) nothing is measured: the call costs only the two lookups.
      const measured = recording || instruments().active;
      if (!measured) return method.apply(repository, args);
      const started = performance.now();
      if (recording) {
        const sessionId = sessionIdOf(operation, args);
        if (sessionId !== undefined) span.setAttribute(ATTR.CONVERSATION_ID, sessionId);
      }
      const done = (error?: unknown) => {
        if (error !== undefined) recordError(span, error);
        span.end();
        instruments().dbOperationDuration.record(
          secondsSince(started),
          error === undefined ? attributes : { ...attributes, [ATTR.ERROR_TYPE]: error instanceof Error ? error.name : 'Error' },
        );
      };
      let result: unknown;
      try {
        result = method.apply(repository, args);
      } catch (error) {
        done(error);
        throw error;
      }
      if (result instanceof Promise) {
        return result.then(
          (value: unknown) => {
            done();
            return value;
          },
          (error: unknown) => {
            done(error);
            throw error;
          },
        );
      }
      done();
      return result;
    };
  };

  return new Proxy(repository, {
    get(target, property, receiver) {
      if (property === INSTRUMENTED) return true;
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'constructor') return value;
      let fn = wrapped.get(property);
      if (fn === undefined) {
        fn = wrap(property, value as (...args: unknown[]) => unknown);
        wrapped.set(property, fn);
      }
      return fn;
    },
  });
}
