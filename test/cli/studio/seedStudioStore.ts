/**
 * A SQLite store seeded from the shipped recorded sample, as the studio's browser test and its screenshots
 * use it: real conversations (τ-bench airline, mini-swe-agent) with compactions of two kinds (a mechanical
 * sliding window, then a summary), a pinned event, a redacted one, and a session whose messages are hostile
 * HTML.
 */
import { fileURLToPath } from 'node:url';
import {
  DefaultSessionService,
  ExtractiveSummarizer,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  Session,
  SlidingWindowCompactionStrategy,
  SqliteSessionRepository,
  defaultTokenCountEstimator,
} from 'session-compaction';
import { loadNeutralFile, toMessage } from 'session-compaction-bench';
import { silentLogger } from '../../summarization/support.js';

export const RECORDED_SAMPLE = fileURLToPath(new URL('../../../benchmarks/data/recorded-sample.json', import.meta.url));

export const HOSTILE_SESSION = 'hostile-html';
export const HOSTILE_TEXT = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> & "quotes"`;

export interface SeededStore {
  /** The recorded sessions, in the order seeded. */
  sessionIds: string[];
  /** The session compacted twice (a sliding window, then a summary). */
  compacted: string;
}

/** Seeds `path` (a new SQLite file); returns what a test looks for. */
export async function seedStudioStore(path: string): Promise<SeededStore> {
  const repository = new SqliteSessionRepository({ path, logger: silentLogger });
  const estimator = defaultTokenCountEstimator();
  const service = new DefaultSessionService(repository, { logger: silentLogger, tokenCountEstimator: estimator });
  const dataset = loadNeutralFile(RECORDED_SAMPLE);
  const start = Date.UTC(2026, 0, 5, 9, 0, 0);
  const sessionIds: string[] = [];
  try {
    for (const [n, recorded] of dataset.sessions.entries()) {
      const id = recorded.sessionId.replace(/[^A-Za-z0-9._-]+/g, '-');
      const userId = id.startsWith('tau') ? 'airline-customer' : 'swe-agent';
      await service.create({ id, userId });
      sessionIds.push(id);
      const half = Math.floor(recorded.events.length / 2);
      for (const [i, event] of recorded.events.entries()) {
        const timestamp = new Date(start + n * 86_400_000 + i * 60_000);
        await service.appendMessage(id, toMessage(event), { timestamp, ...(i === 0 ? { pinned: true } : {}) });
        // The first session is compacted twice on its way: a sliding window half-way, a summary at the end.
        if (n === 0 && i === half) {
          await service.compact(
            id,
            () => true,
            new SlidingWindowCompactionStrategy({ maxEvents: 8, tokenCountEstimator: estimator }),
          );
        }
      }
      if (n === 0) {
        const summarizer = new ExtractiveSummarizer({ maxTokens: 200, tokenCountEstimator: estimator });
        await service.compact(
          id,
          () => true,
          new RecursiveSummarizationCompactionStrategy({
            chatClient: summarizer,
            maxEventsToKeep: 6,
            tokenCountEstimator: estimator,
          }),
        );
      }
    }
    const compacted = sessionIds[0]!;
    // A redacted event in the second session.
    const second = await service.getEvents(sessionIds[1]!);
    const victim = second.find((e) => e.message.type === 'user')!;
    await service.redactEvent(sessionIds[1]!, victim.id, { reason: 'user request' });
    await repository.save(Session.create({ id: HOSTILE_SESSION, userId: '<b>mallory</b>' }));
    await service.appendMessage(HOSTILE_SESSION, Messages.user(HOSTILE_TEXT), { timestamp: new Date(start) });
    await service.appendMessage(HOSTILE_SESSION, Messages.assistant(`I will not run ${HOSTILE_TEXT}`), {
      timestamp: new Date(start + 60_000),
    });
    return { sessionIds, compacted };
  } finally {
    await repository.close();
  }
}
