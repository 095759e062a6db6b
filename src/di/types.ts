/** Injection tokens. Every binding made by createSessionCompactionModule can be rebound by the app. */
export const TYPES = {
  SessionRepository: Symbol.for('session-compaction.SessionRepository'),
  SessionService: Symbol.for('session-compaction.SessionService'),
  SessionServiceOptions: Symbol.for('session-compaction.SessionServiceOptions'),
  TokenCountEstimator: Symbol.for('session-compaction.TokenCountEstimator'),
  ChatClient: Symbol.for('session-compaction.ChatClient'),
  Logger: Symbol.for('session-compaction.Logger'),
} as const;
