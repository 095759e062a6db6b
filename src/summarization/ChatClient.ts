/** One summarisation request: the strategies put the whole transcript prompt in `user`. */
export interface ChatRequest {
  /** Never empty when sent by a strategy. */
  system?: string;
  user: string;
  maxTokens?: number;
  signal?: AbortSignal;
}

/** Tokens one model call consumed, as the endpoint reported them (or as an offline client estimated them). */
export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Of `promptTokens`, those the endpoint read from its prompt cache, when it says. */
  cachedPromptTokens?: number;
}

/** A reply with what it consumed: `usage` is null when the endpoint reported none. */
export interface ChatReply {
  text: string | null;
  usage: ChatUsage | null;
}

/** Receives the usage of every successful call, e.g. to meter summarisation cost. */
export type ChatUsageListener = (usage: ChatUsage, info: { model: string }) => void;

/**
 * The summariser SPI. A rejected promise, `null` or blank text count as a failed summary: strategies
 * then leave the session unchanged (or apply their failure mode); they never lose events.
 */
export interface ChatClient {
  call(request: ChatRequest): Promise<string | null>;
  /**
   * Optional: like `call`, with the usage of this very call. Strategies prefer it, so that the tokens of a
   * summary are attributed to the compaction that asked for it even when calls run concurrently.
   */
  complete?(request: ChatRequest): Promise<ChatReply>;
  /** The model name, when known: strategies record it in the summary's metadata. */
  readonly model?: string;
}
