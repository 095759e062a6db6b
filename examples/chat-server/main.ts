// Runs the example chat backend. See README.md in this folder.
import { buildChatServer } from './app.js';
import { configFromEnv } from './config.js';
import { closeSessionCompaction } from 'session-compaction';
import { createChatContainer } from './container.js';

// A configuration or connection problem is one line naming it, not a stack trace.
function fail(error: unknown): never {
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
  console.error(`chat-server: ${error instanceof Error ? error.message : String(error)}${cause}`);
  process.exit(1);
}

const port = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? '127.0.0.1';
try {
  const config = configFromEnv();
  const container = createChatContainer(config);
  const app = buildChatServer(container);
  await app.listen({ port, host });
  console.log(`chat-server on http://${host}:${port} (model ${config.model}, repository ${config.repository})`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void app.close().then(() => closeSessionCompaction(container)));
  }
} catch (error) {
  fail(error);
}
