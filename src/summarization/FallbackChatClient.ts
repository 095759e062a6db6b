import { InvalidArgumentError } from '../errors.js';
import { defaultLogger, type Logger } from '../logging.js';
import type { ChatClient, ChatReply, ChatRequest } from './ChatClient.js';
import { SummarizationError } from './SummarizationError.js';

export interface FallbackChatClientOptions {
  /** Tried in order: the next one is asked when a client rejects or answers with blank text. */
  clients: readonly ChatClient[];
  logger?: Logger;
}

/**
 * A chain of summarisers: the primary model, then cheaper or local ones. Only
 * when every client failed does the call fail, and then the strategy's `failureMode` applies (a mechanical
 * stub with 'stub'). `model` is the model that wrote the last successful summary, else the primary's.
 */
export class FallbackChatClient implements ChatClient {
  readonly clients: readonly ChatClient[];
  private readonly logger: Logger;
  private lastModel: string | undefined;

  constructor(options: FallbackChatClientOptions) {
    if (options === null || options === undefined || !Array.isArray(options.clients) || options.clients.length === 0) {
      throw new InvalidArgumentError('clients must not be empty');
    }
    for (const c of options.clients) {
      if (c === null || c === undefined || typeof c.call !== 'function') {
        throw new InvalidArgumentError('every client must have a call method');
      }
    }
    this.clients = Object.freeze([...options.clients]);
    this.logger = options.logger ?? defaultLogger();
  }

  get model(): string | undefined {
    return this.lastModel ?? this.clients[0]!.model;
  }

  async call(request: ChatRequest): Promise<string | null> {
    return (await this.complete(request)).text;
  }

  async complete(request: ChatRequest): Promise<ChatReply> {
    const failures: string[] = [];
    for (const [index, client] of this.clients.entries()) {
      try {
        const reply: ChatReply =
          typeof client.complete === 'function'
            ? await client.complete(request)
            : { text: await client.call(request), usage: null };
        if (typeof reply.text === 'string' && reply.text.trim() !== '') {
          this.lastModel = client.model;
          if (index > 0) this.logger.info('summary written by a fallback summariser', { index, model: client.model });
          return reply;
        }
        failures.push(`${client.model ?? `client ${index + 1}`}: no text`);
      } catch (error) {
        failures.push(`${client.model ?? `client ${index + 1}`}: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (request.signal?.aborted === true) break;
    }
    throw new SummarizationError(`every summariser failed (${failures.join('; ')})`, { kind: 'connection' });
  }
}
