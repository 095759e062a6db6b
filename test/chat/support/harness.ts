import OpenAI from 'openai';
import { DefaultSessionService, InMemorySessionRepository } from 'session-compaction';
import { OpenAISessionMemory, type OpenAISessionMemoryOptions } from 'session-compaction/openai';
import { startFakeOpenAIServer, type FakeOpenAIServer, type FakeRequestBody } from '../../support/fakeOpenAIServer.js';

export const silent = { error() {}, warn() {}, info() {}, debug() {} };

export interface Harness {
  server: FakeOpenAIServer;
  repository: InMemorySessionRepository;
  service: DefaultSessionService;
  client: OpenAI;
  memory: OpenAISessionMemory;
  /** Another SessionMemory on the same service, client and model, with `options` on top. */
  memoryWith(options: Partial<OpenAISessionMemoryOptions>): OpenAISessionMemory;
  /** Requests the chat model received (summariser calls use another model name). */
  chatRequests(): FakeRequestBody[];
  close(): Promise<void>;
}

export const CHAT_MODEL = 'chat-model';

/** SessionMemory over the in-memory repository, talking to a loopback OpenAI-compatible server. */
export async function harness(options: Partial<OpenAISessionMemoryOptions> = {}): Promise<Harness> {
  const server = await startFakeOpenAIServer();
  const repository = new InMemorySessionRepository();
  const service = new DefaultSessionService(repository, { logger: silent });
  const client = new OpenAI({ baseURL: server.url, apiKey: 'test-key', maxRetries: 0 });
  const memory = new OpenAISessionMemory({
    sessionService: service,
    client,
    model: CHAT_MODEL,
    metadataStore: repository,
    logger: silent,
    ...options,
  });
  return {
    server,
    repository,
    service,
    client,
    memory,
    memoryWith: (extra) =>
      new OpenAISessionMemory({ sessionService: service, client, model: CHAT_MODEL, logger: silent, ...extra }),
    chatRequests: () => server.requests.filter((r) => r.model === CHAT_MODEL),
    close: () => server.close(),
  };
}

/** Replies "echo: <last user text>" so each answer is distinct and traceable to its question. */
export function echoReplies(server: FakeOpenAIServer): void {
  server.respondWith((body) => {
    const users = (body.messages ?? []).filter((m) => m.role === 'user');
    const last = users[users.length - 1];
    return { content: `echo: ${typeof last?.content === 'string' ? last.content : ''}` };
  });
}

export const roles = (body: FakeRequestBody) => (body.messages ?? []).map((m) => m.role);
export const contents = (body: FakeRequestBody) => (body.messages ?? []).map((m) => m.content);
