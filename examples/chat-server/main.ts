// Runs the example chat backend. See README.md in this folder.
import { buildChatServer } from './app.js';
import { configFromEnv } from './config.js';
import { createChatContainer } from './container.js';

const config = configFromEnv();
const app = buildChatServer(createChatContainer(config));
const port = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? '127.0.0.1';
await app.listen({ port, host });
console.log(`chat-server on http://${host}:${port} (model ${config.model}, repository ${config.repository})`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void app.close());
