/** Injection tokens. Every binding made by createSessionCompactionModule can be rebound by the app. */
export const TYPES = {
  SessionRepository: Symbol.for('session-compaction.SessionRepository'),
  SessionService: Symbol.for('session-compaction.SessionService'),
  SessionServiceOptions: Symbol.for('session-compaction.SessionServiceOptions'),
  TokenCountEstimator: Symbol.for('session-compaction.TokenCountEstimator'),
  ChatClient: Symbol.for('session-compaction.ChatClient'),
  Logger: Symbol.for('session-compaction.Logger'),
  /** The CompactionProfileRegistry: built-ins plus the configuration's profiles. */
  CompactionProfiles: Symbol.for('session-compaction.CompactionProfiles'),
  /** The ResolvedConfiguration, when the module was given one. */
  Configuration: Symbol.for('session-compaction.Configuration'),
  /** What the module opened (its repository), closed by `closeSessionCompaction(container)`. */
  ModuleResources: Symbol.for('session-compaction.ModuleResources'),
} as const;
