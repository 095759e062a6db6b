import type { Logger } from '../logging.js';
import type { ChatProvider, ChatProviderTypes } from './ChatProvider.js';

/** What a provider built from a bare SDK client may be configured with. */
export interface ClientProviderOptions {
  streamUsage?: boolean | undefined;
  logger?: Logger | undefined;
}

type ClientProviderFactory = (client: unknown, options: ClientProviderOptions) => ChatProvider<ChatProviderTypes>;

/**
 * SessionMemory knows no chat API; `new SessionMemory({ client })` is a shorthand for the provider of the one API
 * that registered itself here (the OpenAI provider does, when 'session-compaction' or its './openai' subpath is
 * loaded). A provider module registers; the chat layer never imports one.
 */
let clientProviderFactory: ClientProviderFactory | undefined;

export function registerClientProvider(factory: ClientProviderFactory): void {
  clientProviderFactory = factory;
}

export function providerForClient(client: unknown, options: ClientProviderOptions): ChatProvider<ChatProviderTypes> | undefined {
  return clientProviderFactory?.(client, options);
}
