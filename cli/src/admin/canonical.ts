import type { SessionEvent } from 'session-compaction';
import type { SessionLike } from 'session-compaction/spi';

/**
 * JSON with object keys sorted: PostgreSQL's JSONB reorders keys, so two equal events read from two backends
 * are compared by this, not by JSON.stringify.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Everything an event is made of: two events are the same when these strings are equal. */
export function eventFingerprint(e: SessionEvent): string {
  return canonicalJson({
    id: e.id,
    sessionId: e.sessionId,
    timestamp: e.timestamp.getTime(),
    archived: e.archived,
    branch: e.branch,
    message: e.message,
    metadata: e.metadata,
  });
}

export function sessionFingerprint(s: SessionLike): string {
  return canonicalJson({
    id: s.id,
    userId: s.userId,
    createdAt: s.createdAt.getTime(),
    expiresAt: s.expiresAt === null ? null : s.expiresAt.getTime(),
    metadata: s.metadata,
  });
}
