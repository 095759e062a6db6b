/**
 * What the four framework integrations are held to, shared by their end-to-end tests: a conversation on the
 * SQLite default with a token trigger and window, compactions counted from the service's lifecycle events,
 * and request sizes measured with the library's own estimator (the one the window guard uses).
 */
import {
  DefaultSessionService,
  SqliteSessionRepository,
  TokenCountCompactionStrategy,
  TokenCountTrigger,
  defaultTokenCountEstimator,
  type Message,
} from 'session-compaction';
import { formatMessage } from 'session-compaction/spi';
import { silent } from './harness.js';

/** The prompt budget every request must stay within. */
export const WINDOW_TOKENS = 1500;
/** Compaction starts when the log passes this… */
export const TRIGGER_TOKENS = 900;
/** …and keeps about this much. */
export const KEEP_TOKENS = 400;
export const TURNS = 30;

export interface AcceptanceRig {
  repository: SqliteSessionRepository;
  service: DefaultSessionService;
  trigger: TokenCountTrigger;
  strategy: TokenCountCompactionStrategy;
  /** Compactions that archived something, so far. */
  compactions(): number;
  close(): Promise<void>;
}

export function acceptanceRig(): AcceptanceRig {
  const repository = new SqliteSessionRepository({ path: ':memory:' });
  const service = new DefaultSessionService(repository, { logger: silent });
  let compactions = 0;
  service.events.on('compactionCompleted', (e) => {
    if (e.result.archivedEvents.length > 0) compactions++;
  });
  return {
    repository,
    service,
    trigger: new TokenCountTrigger({ threshold: TRIGGER_TOKENS }),
    strategy: new TokenCountCompactionStrategy({ maxTokens: KEEP_TOKENS }),
    compactions: () => compactions,
    close: () => repository.close(),
  };
}

/** Tokens of a prompt given as log messages, counted as the window guard counts them. */
export function promptTokens(messages: readonly Message[]): number {
  const estimator = defaultTokenCountEstimator();
  return messages.reduce((sum, m) => sum + estimator.estimate(formatMessage(m)), 0);
}

/** A question long enough that 30 turns overflow the window several times over. */
export function question(turn: number): string {
  return `Question ${turn}: what is the status of ticket T-${1000 + turn}? Please include owner, priority and the last update.`;
}

export function toolOutput(turn: number): string {
  return `{"ticket":"T-${1000 + turn}","owner":"user${turn % 7}","priority":"P${turn % 3}","updated":"2026-11-${String((turn % 28) + 1).padStart(2, '0')}","notes":"investigating; ${'detail '.repeat(6).trim()}"}`;
}

export function answer(turn: number): string {
  return `Ticket T-${1000 + turn} is owned by user${turn % 7}, priority P${turn % 3}, last updated this month.`;
}
