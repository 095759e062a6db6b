import type { ChatClient, TokenCountEstimator } from 'session-compaction';
import type { ChatRequest } from 'session-compaction/spi';

/**
 * Wraps the summariser to count what summarisation costs: calls, prompt tokens and reply tokens by the
 * shared estimator (so an offline run and an endpoint run are counted alike).
 */
export class CountingChatClient implements ChatClient {
  calls = 0;
  failures = 0;
  inputTokens = 0;
  outputTokens = 0;
  readonly model?: string;

  constructor(
    private readonly delegate: ChatClient,
    private readonly estimator: TokenCountEstimator,
  ) {
    const model = (delegate as { model?: unknown }).model;
    if (typeof model === 'string') this.model = model;
  }

  async call(request: ChatRequest): Promise<string | null> {
    this.calls++;
    this.inputTokens += this.estimator.estimate((request.system ?? '') + '\n' + request.user);
    try {
      const reply = await this.delegate.call(request);
      if (reply === null || reply.trim() === '') this.failures++;
      else this.outputTokens += this.estimator.estimate(reply);
      return reply;
    } catch (error) {
      this.failures++;
      throw error;
    }
  }

  reset(): void {
    this.calls = this.failures = this.inputTokens = this.outputTokens = 0;
  }
}
