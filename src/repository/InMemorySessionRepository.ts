import { InvalidArgumentError, requireText } from '../errors.js';
import { applyEventWindow, EventFilter } from '../filter/EventFilter.js';
import { Session, type SessionLike } from '../session/Session.js';
import { SessionEvent } from '../session/SessionEvent.js';
import { pageLimit, requireEventsOf } from './appendEventsSupport.js';
import type { ListSessionIdsOptions, SessionIdPage, SessionRepository } from './SessionRepository.js';

interface SessionData {
  session: Session;
  /**
   * The log is `archived` followed by `active`. Keeping them apart makes a compaction cost O(active window),
   * independent of how much history has been archived.
   */
  archived: SessionEvent[];
  active: SessionEvent[];
  /** Event ids present in the log, for O(1) idempotent appends. */
  ids: Set<string>;
  version: number;
}

/**
 * A process-local repository. Every operation runs synchronously between its awaits-free start and end,
 * so on Node's single thread each one is atomic per session: concurrent async callers cannot interleave
 * inside an append or a compaction.
 */
export class InMemorySessionRepository implements SessionRepository {
  private readonly sessions = new Map<string, SessionData>();

  async save(session: SessionLike): Promise<Session> {
    const s = Session.from(session);
    const existing = this.sessions.get(s.id);
    if (existing) existing.session = s;
    else this.sessions.set(s.id, { session: s, archived: [], active: [], ids: new Set(), version: 0 });
    return s;
  }

  async saveIfAbsent(session: SessionLike): Promise<boolean> {
    const s = Session.from(session);
    if (this.sessions.has(s.id)) return false;
    this.sessions.set(s.id, { session: s, archived: [], active: [], ids: new Set(), version: 0 });
    return true;
  }

  async findById(id: string): Promise<Session | null> {
    return this.sessions.get(id)?.session ?? null;
  }

  async findByUserId(userId: string): Promise<Session[]> {
    const out: Session[] = [];
    for (const data of this.sessions.values()) if (data.session.userId === userId) out.push(data.session);
    return out;
  }

  async findExpiredSessionIds(before: Date): Promise<string[]> {
    const limit = before.getTime();
    const out: string[] = [];
    for (const data of this.sessions.values()) {
      const exp = data.session.expiresAt;
      if (exp !== null && exp.getTime() < limit) out.push(data.session.id);
    }
    return out;
  }

  async delete(id: string): Promise<void> {
    this.sessions.delete(id);
  }

  async appendEvent(event: SessionEvent): Promise<void> {
    if (!(event instanceof SessionEvent)) throw new InvalidArgumentError('event must not be null');
    const data = this.require(event.sessionId);
    if (data.ids.has(event.id)) return;
    data.active.push(event);
    data.ids.add(event.id);
    data.version++;
  }

  async getEventVersion(id: string): Promise<number> {
    return this.sessions.get(id)?.version ?? 0;
  }

  async findEvents(id: string, filter: EventFilter = EventFilter.all()): Promise<SessionEvent[]> {
    const data = this.sessions.get(id);
    if (!data) return [];
    const matches: SessionEvent[] = [];
    if (!filter.excludeArchived) for (const e of data.archived) if (filter.matches(e)) matches.push(e);
    for (const e of data.active) if (filter.matches(e)) matches.push(e);
    return applyEventWindow(matches, filter);
  }

  async compactEvents(
    id: string,
    archived: readonly SessionEvent[],
    retained: readonly SessionEvent[],
    expectedVersion: number,
  ): Promise<boolean> {
    const data = this.require(id);
    if (data.version !== expectedVersion) return false;
    const kept = new Set<string>();
    // An event appended already archived sits in the active part; it joins the archive in log order.
    for (const e of data.active) if (e.isArchived()) data.archived.push(e);
    for (const e of archived) {
      data.archived.push(e.asArchived());
      kept.add(e.id);
    }
    const active: SessionEvent[] = [];
    // Retained events are the active window: an archived flag on one of them would hide it from active().
    for (const e of retained) {
      active.push(e.isArchived() ? e.with({ archived: false }) : e);
      kept.add(e.id);
    }
    // A retained event that is archived (a reverted compaction) leaves the archive: ids are unique per session.
    // Found without scanning the archive, so that a compaction stays O(active window).
    const wasActive = new Set(data.active.map((e) => e.id));
    const restored = new Set(retained.filter((e) => !wasActive.has(e.id) && data.ids.has(e.id)).map((e) => e.id));
    if (restored.size > 0) data.archived = data.archived.filter((e) => !restored.has(e.id));
    for (const e of data.active) if (!e.isArchived() && !kept.has(e.id)) data.ids.delete(e.id);
    for (const id of kept) data.ids.add(id);
    data.active = active;
    data.version++;
    return true;
  }

  async appendEvents(sessionId: string, events: readonly SessionEvent[]): Promise<number> {
    requireEventsOf(sessionId, events);
    const data = this.require(sessionId);
    let added = 0;
    for (const e of events) {
      if (data.ids.has(e.id)) continue;
      data.active.push(e);
      data.ids.add(e.id);
      data.version++;
      added++;
    }
    return added;
  }

  async listSessionIds(options?: ListSessionIdsOptions): Promise<SessionIdPage> {
    const limit = pageLimit(options);
    const after = options?.cursor ?? null;
    const ids = [...this.sessions.keys()].filter((id) => after === null || id > after).sort();
    const page = ids.slice(0, limit);
    return { ids: page, cursor: ids.length > limit ? page[page.length - 1]! : null };
  }

  async close(): Promise<void> {
    this.sessions.clear();
  }

  private require(id: string): SessionData {
    requireText(id, 'sessionId');
    const data = this.sessions.get(id);
    if (!data) throw new InvalidArgumentError(`Session not found: ${id}`);
    return data;
  }
}
