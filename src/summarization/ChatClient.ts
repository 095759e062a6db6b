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
}

/** Receives the usage of every successful call, e.g. to meter summarisation cost. */
export type ChatUsageListener = (usage: ChatUsage, info: { model: string }) => void;

/**
 * The summariser SPI. A rejected promise, `null` or blank text count as a failed summary: strategies
 * then leave the session unchanged (or apply their failure mode); they never lose events.
 */
export interface ChatClient {
  call(request: ChatRequest): Promise<string | null>;
  /** The model name, when known: strategies record it in the summary's metadata. */
  readonly model?: string;
}
