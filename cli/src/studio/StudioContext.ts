import type {
  ChatClient,
  CompactionProfileRegistry,
  DefaultSessionService,
  Logger,
  RecallSettings,
  Retriever,
  SessionRepository,
  TokenCountEstimator,
} from 'session-compaction';

/** What every view reads: the one store the studio was started on, and how it counts and compacts. */
export interface StudioContext {
  /** The only store the studio reaches: no request names another. */
  readonly repository: SessionRepository;
  readonly service: DefaultSessionService;
  readonly estimator: TokenCountEstimator;
  /** The window pressure is measured against and prompts are assembled for. */
  readonly contextWindowTokens: number;
  /** What the prompt view recalls with: the store's full-text search, or BM25 in this process. */
  readonly retriever: Retriever;
  /** Recall settings of the configuration file (or the defaults). */
  readonly recall: RecallSettings;
  /** Profiles the Preview view offers: the built-ins plus the configuration file's. */
  readonly profiles: CompactionProfileRegistry;
  /** Summariser used by summarising profiles when a preview is applied (never called by a preview). */
  readonly chatClient: ChatClient;
  readonly allowWrites: boolean;
  /** The store, as messages name it (password masked). */
  readonly where: string;
  readonly logger: Logger;
}

/** One request as the views see it: its query (or form) parameters and the CSRF token forms must carry. */
export interface ViewRequest {
  readonly params: URLSearchParams;
  readonly csrfToken: string;
}
