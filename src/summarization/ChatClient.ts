/** One summarisation request: the strategies put the whole transcript prompt in `user`. */
export interface ChatRequest {
  /** Never empty when sent by a strategy. */
  system?: string;
  user: string;
  maxTokens?: number;
  signal?: AbortSignal;
}

/**
 * The summariser SPI. A rejected promise, `null` or blank text count as a failed summary: strategies
 * then leave the session unchanged (or apply their failure mode); they never lose events.
 */
export interface ChatClient {
  call(request: ChatRequest): Promise<string | null>;
}
