/**
 * Fills a repository with sessions shaped like production ones, for copy / verify tests and the migration
 * benchmark: agent-style turns (user, tool call, tool result, answer), compacted as they grow — by a turn
 * window on two sessions in three, by additive summaries on the third — so the logs hold archived events,
 * synthetic summaries that record what they cover, and versions above the event count.
 */
import {
  AdditiveSummarizationCompactionStrategy,
  createDefaultLogger,
  DefaultSessionService,
  ExtractiveSummarizer,
  Session,
  SessionEvent,
  TurnWindowCompactionStrategy,
  type SessionRepository,
} from 'session-compaction';
import { isBatchAppendRepository } from 'session-compaction/spi';
import { syntheticMessages } from '../../src/bench/scaling/syntheticSession.js';

export interface PopulateOptions {
  sessions: number;
  /** Events appended per session (the stored log also holds the summaries compaction added). */
  events: number;
  /** Events appended between two compactions; default 50. */
  chunk?: number;
  onSession?: (index: number) => void;
}

export async function populateStore(repository: SessionRepository, options: PopulateOptions): Promise<string[]> {
  const logger = createDefaultLogger({ silent: true });
  const service = new DefaultSessionService(repository, { logger });
  const turnWindow = new TurnWindowCompactionStrategy({ maxTurns: 4 });
  const additive = new AdditiveSummarizationCompactionStrategy({
    chatClient: new ExtractiveSummarizer({ maxTokens: 64 }),
    keepTurns: 3,
    maxSummaryTokens: 400,
    logger,
  });
  const chunk = options.chunk ?? 50;
  const ids: string[] = [];
  for (let i = 0; i < options.sessions; i++) {
    const id = `sess-${String(i).padStart(5, '0')}`;
    ids.push(id);
    const createdAt = new Date(Date.UTC(2025, 0, 1) + i * 60_000);
    await repository.save(
      Session.create({
        id,
        userId: `user-${i % 37}`,
        createdAt,
        expiresAt: i % 4 === 0 ? null : new Date(createdAt.getTime() + (i % 3) * 86_400_000 * 30),
        metadata: { tenant: `t${i % 5}`, index: i },
      }),
    );
    const messages = syntheticMessages(options.events, 1000 + i);
    const events = messages.map((message, k) =>
      SessionEvent.create({ sessionId: id, id: `${id}-e${k}`, message, timestamp: new Date(createdAt.getTime() + k * 1000) }),
    );
    for (let k = 0; k < events.length; k += chunk) {
      const batch = events.slice(k, k + chunk);
      if (isBatchAppendRepository(repository)) await repository.appendEvents(id, batch);
      else for (const e of batch) await repository.appendEvent(e);
      await service.compact(id, () => true, i % 3 === 2 ? additive : turnWindow);
    }
    options.onSession?.(i);
  }
  return ids;
}
