import { InvalidArgumentError, requireText } from '../errors.js';
import { applyEventWindow, EventFilter } from '../filter/EventFilter.js';
import { Session, type SessionLike } from '../session/Session.js';
import { SessionEvent } from '../session/SessionEvent.js';
import { pageLimit, requireEventsOf } from './appendEventsSupport.js';
import {
  freezeRecord,
  newestFirst,
  recordsCovering,
  requireRecordOf,
  summarizeCompactionRecord,
  type CompactionRecord,
  type CompactionRecordSummary,
} from './CompactionRecord.js';
import type { AtomicInsertRepository } from './AtomicInsertRepository.js';
import type { BatchAppendRepository } from './BatchAppendRepository.js';
import type { CompactionRecordRepository } from './CompactionRecordRepository.js';
import type { EnumerableRepository, ListSessionIdsOptions, SessionIdPage } from './EnumerableRepository.js';
import {
  ownerHash,
  sessionDeletedError,
  type ErasedSession,
  type EraseSessionOptions,
  type ErasureRepository,
  type Tombstone,
} from './ErasureRepository.js';
import type { EventLogState, EventLogStateRepository } from './EventLogStateRepository.js';
import { redactionScopeOf, type RedactionScopeRepository } from './RedactionScopeRepository.js';
import { countKinds } from './eventKinds.js';
import { requireRewriteBatch, type EventRewritingRepository } from './EventRewritingRepository.js';
import type { MetadataUpdatingRepository, SessionMetadataUpdate } from './MetadataUpdatingRepository.js';
import {
  lastActivity,
  requirePurgeCriteria,
  type ArchivePurgeCriteria,
  type RetentionRepository,
  type SessionActivityPage,
} from './RetentionRepository.js';
import type { SessionRepository } from './SessionRepository.js';
import {
  resolveListSessionsOptions,
  type ListSessionsOptions,
  type SessionListingPage,
  type SessionListingRepository,
} from './SessionListingRepository.js';
import type { ForkingRepository, ForkOutcome, ForkRequest } from './ForkingRepository.js';
import { userErasureInProgressError, type UserErasureRepository } from './UserErasureRepository.js';

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
  /** Archive purges that removed something (see EventLogState). */
  purgeGeneration: number;
  /** Compaction records, oldest first. */
  compactions: CompactionRecord[];
}

function emptyLog(session: Session): SessionData {
  return { session, archived: [], active: [], ids: new Set(), version: 0, purgeGeneration: 0, compactions: [] };
}

/**
 * The newest `n` matches in log order, read from the end of the log: a tail read (a retriever catching up on
 * appends) costs what it returns, however long the archive behind it.
 */
function newestMatches(data: SessionData, filter: EventFilter, n: number): SessionEvent[] {
  const newest: SessionEvent[] = [];
  for (let i = data.active.length - 1; i >= 0 && newest.length < n; i--) {
    if (filter.matches(data.active[i]!)) newest.push(data.active[i]!);
  }
  if (!filter.excludeArchived) {
    for (let i = data.archived.length - 1; i >= 0 && newest.length < n; i--) {
      if (filter.matches(data.archived[i]!)) newest.push(data.archived[i]!);
    }
  }
  return newest.reverse();
}

/**
 * A process-local repository. Every operation runs synchronously between its awaits-free start and end,
 * so on Node's single thread each one is atomic per session: concurrent async callers cannot interleave
 * inside an append or a compaction.
 */
export class InMemorySessionRepository
  implements
    SessionRepository,
    AtomicInsertRepository,
    MetadataUpdatingRepository,
    EventLogStateRepository,
    RedactionScopeRepository,
    CompactionRecordRepository,
    BatchAppendRepository,
    EnumerableRepository,
    SessionListingRepository,
    ErasureRepository,
    EventRewritingRepository,
    RetentionRepository,
    ForkingRepository,
    UserErasureRepository
{
  private readonly sessions = new Map<string, SessionData>();
  private readonly tombstones = new Map<string, Tombstone>();
  /** ownerHash(userId) → until (ms) of users whose erasure is in progress (UserErasureRepository). */
  private readonly erasing = new Map<string, number>();

  async save(session: SessionLike): Promise<Session> {
    const s = Session.from(session);
    if (this.tombstones.has(s.id)) throw sessionDeletedError(s.id, this.tombstones.get(s.id));
    const existing = this.sessions.get(s.id);
    if (existing) existing.session = s;
    else {
      this.refuseErasing(s);
      this.sessions.set(s.id, emptyLog(s));
    }
    return s;
  }

  async saveIfAbsent(session: SessionLike): Promise<boolean> {
    const s = Session.from(session);
    if (this.tombstones.has(s.id)) throw sessionDeletedError(s.id, this.tombstones.get(s.id));
    if (this.sessions.has(s.id)) return false;
    this.refuseErasing(s);
    this.sessions.set(s.id, emptyLog(s));
    return true;
  }

  /** Every check and the whole write with no await between them: atomic on Node's single thread. */
  async forkSession(request: ForkRequest): Promise<ForkOutcome> {
    const s = Session.from(request.fork);
    requireEventsOf(s.id, request.events);
    const source = this.sessions.get(requireText(request.sourceId, 'sourceId'));
    if (source === undefined) return 'source-missing';
    const { version, purgeGeneration } = request.expected;
    if (source.version !== version || (purgeGeneration !== null && source.purgeGeneration !== purgeGeneration)) return 'changed';
    if (this.tombstones.has(s.id)) throw sessionDeletedError(s.id, this.tombstones.get(s.id));
    if (this.sessions.has(s.id)) return 'exists';
    this.refuseErasing(s);
    const data = emptyLog(s);
    for (const e of request.events) {
      if (data.ids.has(e.id)) continue;
      data.active.push(e);
      data.ids.add(e.id);
      data.version++;
    }
    this.sessions.set(s.id, data);
    return 'forked';
  }

  async beginUserErasure(userId: string, until: Date): Promise<void> {
    this.erasing.set(ownerHash(requireText(userId, 'userId')), until.getTime());
  }

  async endUserErasure(userId: string): Promise<void> {
    this.erasing.delete(ownerHash(requireText(userId, 'userId')));
  }

  private refuseErasing(s: Session): void {
    if (this.erasing.size === 0) return;
    const until = this.erasing.get(ownerHash(s.userId));
    if (until !== undefined && until > Date.now()) throw userErasureInProgressError(s.id);
  }

  async findById(id: string): Promise<Session | null> {
    return this.sessions.get(id)?.session ?? null;
  }

  /** Read, update and write with no await between them: atomic on Node's single thread. */
  async updateSessionMetadata(id: string, update: SessionMetadataUpdate): Promise<Session | null> {
    const data = this.sessions.get(requireText(id, 'sessionId'));
    if (data === undefined) return null;
    data.session = data.session.with({ metadata: update(data.session.metadata) });
    return data.session;
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

  async getEventLogState(id: string): Promise<EventLogState> {
    const data = this.sessions.get(id);
    return data === undefined
      ? { version: 0, purgeGeneration: 0 }
      : { version: data.version, purgeGeneration: data.purgeGeneration };
  }

  async findEvents(id: string, filter: EventFilter = EventFilter.all()): Promise<SessionEvent[]> {
    const data = this.sessions.get(id);
    if (!data) return [];
    if (filter.lastN !== undefined) return newestMatches(data, filter, filter.lastN);
    // A page stops at its last match: reading the first pages of a long log costs what they return, not the archive.
    const enough = filter.pageSize === undefined ? Infinity : ((filter.page ?? 0) + 1) * filter.pageSize;
    const matches: SessionEvent[] = [];
    if (!filter.excludeArchived) {
      for (const e of data.archived) {
        if (matches.length >= enough) break;
        if (filter.matches(e)) matches.push(e);
      }
    }
    for (const e of data.active) {
      if (matches.length >= enough) break;
      if (filter.matches(e)) matches.push(e);
    }
    return applyEventWindow(matches, filter);
  }

  async compactEvents(
    id: string,
    archived: readonly SessionEvent[],
    retained: readonly SessionEvent[],
    expectedVersion: number,
    record?: CompactionRecord,
  ): Promise<boolean> {
    const data = this.require(id);
    const r = record === undefined ? undefined : freezeRecord(requireRecordOf(id, record));
    if (r !== undefined && data.compactions.some((c) => c.id === r.id))
      throw new InvalidArgumentError(`Compaction record exists: ${r.id}`);
    const committed = this.compactNow(id, archived, retained, expectedVersion);
    if (committed && r !== undefined) data.compactions.push(r);
    return committed;
  }

  /** Synchronous, so that a record and a revert mark land in the same step as the window change. */
  private compactNow(
    id: string,
    archived: readonly SessionEvent[],
    retained: readonly SessionEvent[],
    expectedVersion: number,
  ): boolean {
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

  async findRedactionScope(id: string, eventId: string): Promise<SessionEvent[]> {
    return redactionScopeOf(await this.findEvents(id, EventFilter.all()), eventId);
  }

  async listCompactions(id: string): Promise<CompactionRecord[]> {
    return newestFirst(this.sessions.get(id)?.compactions ?? []);
  }

  async listCompactionSummaries(id: string): Promise<CompactionRecordSummary[]> {
    return (await this.listCompactions(id)).map(summarizeCompactionRecord);
  }

  async revertCompactionEvents(
    id: string,
    compactionId: string,
    window: readonly SessionEvent[],
    expectedVersion: number,
    revertedAt: Date,
  ): Promise<boolean> {
    const data = this.require(id);
    const index = data.compactions.findIndex((c) => c.id === compactionId);
    if (index < 0) throw new InvalidArgumentError(`Compaction not found: ${compactionId}`);
    const committed = this.compactNow(id, [], window, expectedVersion);
    if (committed) data.compactions[index] = freezeRecord({ ...data.compactions[index]!, revertedAt });
    return committed;
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

  async listSessions(options?: ListSessionsOptions): Promise<SessionListingPage> {
    const { cursor, limit, userId, idPrefix, withActiveEvents } = resolveListSessionsOptions(options);
    const ids = [...this.sessions.entries()]
      .filter(
        ([id, data]) =>
          (cursor === null || id > cursor) &&
          (userId === null || data.session.userId === userId) &&
          (idPrefix === null || id.startsWith(idPrefix)),
      )
      .map(([id]) => id)
      .sort();
    const page = ids.slice(0, limit).map((id) => {
      const data = this.sessions.get(id)!;
      const last = data.active[data.active.length - 1] ?? data.archived[data.archived.length - 1];
      return {
        session: data.session,
        version: data.version,
        activeEvents: data.active.length,
        archivedEvents: data.archived.length,
        lastEventAt: last === undefined ? null : last.timestamp,
        compactions: data.compactions.filter((c) => c.revertedAt === null).length,
        ...(withActiveEvents ? { activeWindow: [...data.active] } : {}),
      };
    });
    return { sessions: page, cursor: ids.length > limit ? page[page.length - 1]!.session.id : null };
  }

  async eraseSession(id: string, options: EraseSessionOptions): Promise<ErasedSession | null> {
    const data = this.sessions.get(requireText(id, 'sessionId'));
    if (data === undefined) return null;
    if (options.idleBefore !== undefined && this.lastActiveAt(data) >= options.idleBefore) return null;
    this.sessions.delete(id);
    if (options.tombstone !== null) {
      this.tombstones.set(id, { sessionId: id, ownerHash: ownerHash(data.session.userId), ...options.tombstone });
    }
    return { sessionId: id, userId: data.session.userId, ...countKinds([...data.archived, ...data.active]) };
  }

  async findTombstone(id: string): Promise<Tombstone | null> {
    return this.tombstones.get(id) ?? null;
  }

  async recreateSession(session: SessionLike): Promise<boolean> {
    const s = Session.from(session);
    const tombstone = this.tombstones.get(s.id);
    if (tombstone !== undefined && tombstone.ownerHash !== ownerHash(s.userId)) throw sessionDeletedError(s.id, tombstone);
    if (this.sessions.has(s.id)) return false;
    this.refuseErasing(s);
    this.tombstones.delete(s.id);
    this.sessions.set(s.id, emptyLog(s));
    return true;
  }

  async purgeTombstones(before: Date, limit: number, sessionId?: string): Promise<number> {
    let removed = 0;
    const candidates: Iterable<[string, Tombstone]> =
      sessionId === undefined
        ? this.tombstones
        : this.tombstones.has(sessionId)
          ? [[sessionId, this.tombstones.get(sessionId)!]]
          : [];
    for (const [id, t] of candidates) {
      if (removed >= limit) break;
      if (t.expiresAt !== null && t.expiresAt < before) {
        this.tombstones.delete(id);
        removed++;
      }
    }
    return removed;
  }

  async rewriteEvents(id: string, events: readonly SessionEvent[], expectedVersion: number): Promise<boolean> {
    requireRewriteBatch(id, events);
    const data = this.require(id);
    // The version first: a stale rewrite loses its compare-and-set even when its events are gone by now.
    if (data.version !== expectedVersion) return false;
    const positions = events.map((e) => {
      const inArchive = data.archived.findIndex((x) => x.id === e.id);
      if (inArchive >= 0) return { list: data.archived, index: inArchive };
      const inWindow = data.active.findIndex((x) => x.id === e.id);
      if (inWindow >= 0) return { list: data.active, index: inWindow };
      throw new InvalidArgumentError(`Event not found: ${e.id}`);
    });
    positions.forEach(({ list, index }, i) => {
      list[index] = events[i]!.with({ archived: list[index]!.archived });
    });
    data.version++;
    return true;
  }

  async purgeArchivedEvents(id: string, criteria: ArchivePurgeCriteria): Promise<string[]> {
    requirePurgeCriteria(criteria);
    const data = this.sessions.get(id);
    if (data === undefined) return [];
    // The archive in log order: the archived list, then events appended already archived (still in the window).
    const archive = [...data.archived, ...data.active.filter((e) => e.isArchived())];
    const overCount = criteria.keepLast === undefined ? 0 : Math.max(0, archive.length - criteria.keepLast);
    const doomed = new Set<string>();
    for (let i = 0; i < archive.length && doomed.size < criteria.limit; i++) {
      const e = archive[i]!;
      if (e.isSynthetic()) continue;
      if (i < overCount || (criteria.before !== undefined && e.timestamp < criteria.before)) doomed.add(e.id);
    }
    if (doomed.size === 0) return [];
    data.archived = data.archived.filter((e) => !doomed.has(e.id));
    data.active = data.active.filter((e) => !(e.isArchived() && doomed.has(e.id)));
    for (const d of doomed) data.ids.delete(d);
    data.purgeGeneration++;
    // A compaction whose archived events are gone can no longer be reverted; its record (and the content of
    // the summaries it removed) goes with them.
    const stale = new Set(recordsCovering(data.compactions, doomed).map((r) => r.id));
    data.compactions = data.compactions.filter((r) => !stale.has(r.id));
    return [...doomed];
  }

  async listSessionActivity(cursor: string | null, limit: number): Promise<SessionActivityPage> {
    const ids = [...this.sessions.keys()].filter((id) => cursor === null || id > cursor).sort();
    const page = ids.slice(0, limit);
    return {
      sessions: page.map((id) => {
        const data = this.sessions.get(id)!;
        return { id, userId: data.session.userId, lastActiveAt: this.lastActiveAt(data) };
      }),
      cursor: ids.length > limit ? page[page.length - 1]! : null,
    };
  }

  async close(): Promise<void> {
    this.sessions.clear();
    this.tombstones.clear();
    this.erasing.clear();
  }

  private lastActiveAt(data: SessionData): Date {
    const newest = data.active[data.active.length - 1] ?? data.archived[data.archived.length - 1];
    return lastActivity(data.session.createdAt, newest?.timestamp);
  }

  private require(id: string): SessionData {
    requireText(id, 'sessionId');
    const data = this.sessions.get(id);
    if (!data) throw new InvalidArgumentError(`Session not found: ${id}`);
    return data;
  }
}
