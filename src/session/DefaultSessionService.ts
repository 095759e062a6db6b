import { randomUUID } from 'node:crypto';
import { inject, injectable, optional } from 'inversify';
import { CompactionRequest } from '../compaction/CompactionRequest.js';
import { CompactionResult } from '../compaction/CompactionResult.js';
import { toCompactionStrategy, type CompactionStrategyLike } from '../compaction/CompactionStrategy.js';
import { toCompactionTrigger, type CompactionTriggerLike } from '../compaction/CompactionTrigger.js';
import { TYPES } from '../di/types.js';
import { InvalidArgumentError, requireText } from '../errors.js';
import { EventFilter } from '../filter/EventFilter.js';
import { defaultLogger, type Logger } from '../logging.js';
import type { SessionRepository } from '../repository/SessionRepository.js';
import { validateCreateSessionRequest, type CreateSessionRequest } from './CreateSessionRequest.js';
import type { Message } from './Message.js';
import { DEFAULT_TIME_TO_LIVE_MS, Session } from './Session.js';
import { SessionEvent } from './SessionEvent.js';
import type { AppendMessageOptions, SessionService } from './SessionService.js';

export interface DefaultSessionServiceOptions {
  /** Time to live of new sessions unless the request says otherwise; default 60 days. */
  defaultTimeToLiveMs?: number;
  logger?: Logger;
  /** Clock, for tests and replays. */
  now?: () => Date;
}

@injectable()
export class DefaultSessionService implements SessionService {
  readonly defaultTimeToLiveMs: number;
  protected readonly logger: Logger;
  protected readonly now: () => Date;

  constructor(
    @inject(TYPES.SessionRepository) protected readonly repository: SessionRepository,
    @inject(TYPES.SessionServiceOptions) @optional() options: DefaultSessionServiceOptions = {},
  ) {
    if (repository === null || repository === undefined) throw new InvalidArgumentError('repository must not be null');
    const opts = options ?? {};
    const ttl = opts.defaultTimeToLiveMs ?? DEFAULT_TIME_TO_LIVE_MS;
    if (!Number.isFinite(ttl) || ttl <= 0) throw new InvalidArgumentError('defaultTimeToLiveMs must be greater than 0');
    this.defaultTimeToLiveMs = ttl;
    this.logger = opts.logger ?? defaultLogger();
    this.now = opts.now ?? (() => new Date());
  }

  async create(request: CreateSessionRequest): Promise<Session> {
    validateCreateSessionRequest(request);
    const now = this.now();
    const id = request.id !== undefined && request.id !== null && request.id.trim() !== '' ? request.id : randomUUID();
    const session = Session.create({
      id,
      userId: request.userId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + (request.timeToLiveMs ?? this.defaultTimeToLiveMs)),
      metadata: request.metadata ?? {},
    });
    return this.repository.save(session);
  }

  async findById(id: string): Promise<Session | null> {
    return this.repository.findById(requireText(id, 'sessionId'));
  }

  async findByUserId(userId: string): Promise<Session[]> {
    return this.repository.findByUserId(requireText(userId, 'userId'));
  }

  async delete(id: string): Promise<void> {
    await this.repository.delete(requireText(id, 'sessionId'));
  }

  async deleteExpiredSessions(before: Date): Promise<number> {
    if (!(before instanceof Date) || Number.isNaN(before.getTime()))
      throw new InvalidArgumentError('before must be a valid Date');
    const ids = await this.repository.findExpiredSessionIds(before);
    for (const id of ids) await this.repository.delete(id);
    return ids.length;
  }

  async appendEvent(event: SessionEvent): Promise<void> {
    if (!(event instanceof SessionEvent)) throw new InvalidArgumentError('event must not be null');
    await this.repository.appendEvent(event);
  }

  async appendMessage(sessionId: string, message: Message, options: AppendMessageOptions = {}): Promise<SessionEvent> {
    const event = SessionEvent.create({
      sessionId: requireText(sessionId, 'sessionId'),
      message,
      ...(options.id !== undefined ? { id: options.id } : {}),
      timestamp: options.timestamp ?? this.now(),
      metadata: options.metadata ?? {},
      branch: options.branch ?? null,
    });
    await this.repository.appendEvent(event);
    return event;
  }

  async getEvents(sessionId: string, filter: EventFilter = EventFilter.all()): Promise<SessionEvent[]> {
    return this.repository.findEvents(requireText(sessionId, 'sessionId'), filter ?? EventFilter.all());
  }

  async getMessages(sessionId: string): Promise<Message[]> {
    return (await this.getEvents(sessionId)).map((e) => e.message);
  }

  /**
   * 1. missing session → "Session not found: <id>";
   * 2. read the version BEFORE the events, so that any append after it makes the CAS write fail;
   * 3. read the active window only (archived events are never re-processed);
   * 4. trigger false → the window unchanged, no write;
   * 5. run the strategy; if it archived something, commit with compactEvents(…, version);
   * 6. CAS lost → the window as read with nothing archived — never an exception, never a retry that would
   *    call a summariser again.
   */
  async compact(sessionId: string, trigger: CompactionTriggerLike, strategy: CompactionStrategyLike): Promise<CompactionResult> {
    requireText(sessionId, 'sessionId');
    const t = toCompactionTrigger(trigger);
    const s = toCompactionStrategy(strategy);
    const session = await this.repository.findById(sessionId);
    if (session === null) throw new InvalidArgumentError(`Session not found: ${sessionId}`);
    const version = await this.repository.getEventVersion(sessionId);
    const events = await this.repository.findEvents(sessionId, EventFilter.active());
    const request = CompactionRequest.of(session, events);
    if (!(await t.shouldCompact(request))) return CompactionResult.noop(events);
    const result = await s.compact(request);
    if (result.archivedEvents.length === 0) return result;
    const committed = await this.repository.compactEvents(sessionId, result.archivedEvents, result.compactedEvents, version);
    if (!committed) {
      this.logger.debug('compaction lost its CAS race; skipped', { sessionId, expectedVersion: version });
      return CompactionResult.noop(events);
    }
    return result;
  }
}
