import { randomUUID } from 'node:crypto';
import { IllegalStateError, InvalidArgumentError } from '../errors.js';
import { EventFilter } from '../filter/EventFilter.js';
import type { Logger } from '../logging.js';
import { isAtomicInsertRepository } from '../repository/AtomicInsertRepository.js';
import { isBatchAppendRepository } from '../repository/BatchAppendRepository.js';
import { isForkingRepository, type ForkingRepository } from '../repository/ForkingRepository.js';
import type { EventLogState } from '../repository/EventLogStateRepository.js';
import { readEventLogState } from '../repository/readEventLogState.js';
import type { SessionRepository } from '../repository/SessionRepository.js';
import { Session } from '../session/Session.js';
import { restoreSessionEvent, type SessionEvent } from '../session/SessionEvent.js';
import { requireOffsetDate, requireStorableText } from '../validation/inputs.js';
import { accessDenied } from './sessionAccess.js';

/** Session metadata key under which a fork records its origin. */
export const METADATA_FORKED_FROM = 'forkedFrom';

/** Reads before a fork gives up getting a snapshot that no concurrent write or archive purge changed. */
const MAX_SNAPSHOT_ATTEMPTS = 5;

export interface ForkSessionOptions {
  /** Copy the log up to and including this event (log order); default: the whole log. */
  atEventId?: string;
  /** The caller's user (server-side state): forking a session of another user is refused. */
  userId?: string;
  /** Id of the new session; default a random UUID. An id in use is refused. */
  id?: string;
  /** Time to live of the fork; default the service's. */
  timeToLiveMs?: number;
}

/** What a fork records in its session metadata (`metadata.forkedFrom`). */
export interface ForkOrigin {
  sessionId: string;
  /** The last event copied; null when the source log was empty. */
  atEventId: string | null;
  /** The source's log version the copy was taken at. */
  version: number;
  /**
   * The source's purge generation the copy was taken at: with `version`, it names the log that was copied
   * (an archive purge removes archived events without a version step). Null when the repository cannot
   * report it; absent in forks recorded before it was added.
   */
  purgeGeneration?: number | null;
  forkedAt: string;
}

export interface ForkContext {
  repository: SessionRepository;
  now: () => Date;
  defaultTimeToLiveMs: number;
  logger: Logger;
}

/** forkSession of DefaultSessionService: a copy of a log prefix under a new session id, the source untouched. */
export class SessionForker {
  constructor(private readonly context: ForkContext) {}

  async fork(sessionId: string, options: ForkSessionOptions = {}): Promise<Session> {
    const opts = options ?? {};
    const { repository } = this.context;
    requireStorableText(sessionId, 'sessionId');
    const forkId = opts.id === undefined ? randomUUID() : requireStorableText(opts.id, 'id');
    if (isForkingRepository(repository)) return this.forkAtomically(repository, sessionId, forkId, opts);
    const source = await this.requireSource(sessionId, opts);
    const { state, log } = await this.snapshot(sessionId);
    // The source may have been erased while it was read: an empty log at version 0 is then no snapshot.
    if ((await repository.findById(sessionId)) === null) throw new InvalidArgumentError(`Session not found: ${sessionId}`);
    const { fork, events, unarchive } = this.prepare(source, forkId, state, log, opts);
    const inserted = isAtomicInsertRepository(repository) ? await repository.saveIfAbsent(fork) : await this.saveChecked(fork);
    if (!inserted) throw new IllegalStateError(`Session already exists: ${fork.id}`);
    try {
      await this.copy(fork.id, events, unarchive);
    } catch (error) {
      // A fork is all or nothing: a partial copy would look like a complete, shorter conversation.
      await repository
        .delete(fork.id)
        .catch((cleanup: unknown) =>
          this.context.logger.warn('could not remove a partially copied fork', { sessionId: fork.id, error: String(cleanup) }),
        );
      throw error;
    }
    return fork;
  }

  /**
   * One atomic write of the session and its whole copy, valid only while the source is still at the state
   * its log was read at: a source erased or deleted meanwhile fails the fork (nothing written), one that
   * changed is read again. A crash leaves either the whole fork or nothing.
   */
  private async forkAtomically(
    repository: SessionRepository & ForkingRepository,
    sessionId: string,
    forkId: string,
    opts: ForkSessionOptions,
  ): Promise<Session> {
    const token = randomUUID();
    for (let attempt = 0; attempt < MAX_SNAPSHOT_ATTEMPTS; attempt++) {
      const source = await this.requireSource(sessionId, opts);
      const { state, log } = await this.snapshot(sessionId);
      const { fork, events, unarchive } = this.prepare(source, forkId, state, log, opts);
      const outcome = await repository.forkSession({
        sourceId: sessionId,
        expected: state,
        fork,
        events: this.copies(fork.id, events, unarchive),
        token,
      });
      if (outcome === 'forked') return fork;
      if (outcome === 'exists') throw new IllegalStateError(`Session already exists: ${fork.id}`);
      if (outcome === 'source-missing') throw new InvalidArgumentError(`Session not found: ${sessionId}`);
    }
    throw new IllegalStateError(`Could not fork ${sessionId}: the session kept changing (${MAX_SNAPSHOT_ATTEMPTS} attempts)`);
  }

  private async requireSource(sessionId: string, opts: ForkSessionOptions): Promise<Session> {
    const source = await this.context.repository.findById(sessionId);
    if (source === null) throw new InvalidArgumentError(`Session not found: ${sessionId}`);
    if (opts.userId !== undefined && source.userId !== requireStorableText(opts.userId, 'userId'))
      throw accessDenied(sessionId, opts.userId);
    return source;
  }

  private prepare(
    source: Session,
    forkId: string,
    state: EventLogState,
    log: readonly SessionEvent[],
    opts: ForkSessionOptions,
  ): { fork: Session; events: SessionEvent[]; unarchive: boolean } {
    const { events, unarchive } = prefix(log, opts.atEventId);
    const now = this.context.now();
    const origin: ForkOrigin = {
      sessionId: source.id,
      atEventId: events.length === 0 ? null : events[events.length - 1]!.id,
      version: state.version,
      purgeGeneration: state.purgeGeneration,
      forkedAt: now.toISOString(),
    };
    const fork = Session.create({
      id: forkId,
      userId: source.userId,
      createdAt: now,
      expiresAt: requireOffsetDate(now, opts.timeToLiveMs ?? this.context.defaultTimeToLiveMs, 'timeToLiveMs'),
      metadata: { ...source.metadata, [METADATA_FORKED_FROM]: { ...origin } },
    });
    return { fork, events, unarchive };
  }

  /**
   * The whole log and the state it was read at, retried until neither a write nor an archive purge landed in
   * between: a purge leaves the version alone, so the version alone would accept a log read half before and
   * half after one. Without `getEventLogState` the repository gives the version alone (generation null).
   */
  private async snapshot(sessionId: string): Promise<{ state: EventLogState; log: SessionEvent[] }> {
    const { repository } = this.context;
    for (let attempt = 0; attempt < MAX_SNAPSHOT_ATTEMPTS; attempt++) {
      const state = await readEventLogState(repository, sessionId);
      const log = await repository.findEvents(sessionId, EventFilter.all());
      const after = await readEventLogState(repository, sessionId);
      if (after.version === state.version && after.purgeGeneration === state.purgeGeneration) return { state, log };
    }
    throw new IllegalStateError(`Could not fork ${sessionId}: the session kept changing (${MAX_SNAPSHOT_ATTEMPTS} attempts)`);
  }

  private async copy(forkId: string, events: readonly SessionEvent[], unarchive: boolean): Promise<void> {
    const { repository } = this.context;
    const copies = this.copies(forkId, events, unarchive);
    if (isBatchAppendRepository(repository)) await repository.appendEvents(forkId, copies);
    else for (const e of copies) await repository.appendEvent(e);
  }

  private copies(forkId: string, events: readonly SessionEvent[], unarchive: boolean): SessionEvent[] {
    return events.map((e) =>
      restoreSessionEvent({
        id: e.id,
        sessionId: forkId,
        timestamp: e.timestamp,
        message: e.message,
        metadata: { ...e.metadata },
        branch: e.branch,
        archived: e.archived && !unarchive,
      }),
    );
  }

  private async saveChecked(fork: Session): Promise<boolean> {
    if ((await this.context.repository.findById(fork.id)) !== null) return false;
    await this.context.repository.save(fork);
    return true;
  }
}

/**
 * The log up to and including `atEventId`. When that event is archived, the prefix holds only archived events
 * (the archive precedes the window in log order) and no summary of exactly that point exists: the copy is
 * then the conversation as it was, uncompacted — its events are copied active.
 */
function prefix(log: readonly SessionEvent[], atEventId: string | undefined): { events: SessionEvent[]; unarchive: boolean } {
  if (atEventId === undefined) return { events: [...log], unarchive: false };
  const at = log.findIndex((e) => e.id === requireStorableText(atEventId, 'atEventId'));
  if (at < 0) throw new InvalidArgumentError(`Event not found: ${atEventId}`);
  return { events: log.slice(0, at + 1), unarchive: log[at]!.isArchived() };
}
