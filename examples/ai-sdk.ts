// The Vercel AI SDK with session memory: a chat route (streamText, a multi-step tool loop) and a page-reload
// endpoint restoring useChat messages. Run: OPENAI_API_KEY=... npx tsx examples/ai-sdk.ts
// In your project: import { AiSdkSessionMemory } from 'session-compaction/ai-sdk'.
import { createServer } from 'node:http';
import { openai } from '@ai-sdk/openai';
import { jsonSchema, stepCountIs, streamText, tool, type ModelMessage } from 'ai';
import {
  DefaultSessionService,
  IllegalStateError,
  SqliteSessionRepository,
  TokenCountCompactionStrategy,
  TokenCountTrigger,
} from 'session-compaction';
import { AiSdkSessionMemory } from 'session-compaction/ai-sdk';

const sessions = new DefaultSessionService(new SqliteSessionRepository({ path: process.env.SESSIONS_DB ?? './sessions.db' }));
const memory = new AiSdkSessionMemory({
  sessionService: sessions,
  contextWindowTokens: 120_000,
  compactionTrigger: new TokenCountTrigger({ threshold: 80_000 }),
  compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: 40_000 }),
});

const tools = {
  getWeather: tool({
    description: 'Current weather for a city',
    inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
    execute: async ({ city }) => ({ city, celsius: 14, sky: 'cloudy' }),
  }),
};

async function readJson(req: import('node:http').IncomingMessage): Promise<{ sessionId: string; text: string }> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return JSON.parse(body) as { sessionId: string; text: string };
}

async function handle(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
  const userId = String(req.headers['x-user-id'] ?? 'demo-user'); // from your auth in a real app
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (req.method === 'POST' && url.pathname === '/chat') {
    const { sessionId, text } = await readJson(req);
    const messages: ModelMessage[] = [{ role: 'user', content: text }]; // only the new message
    const { result, stored } = await memory.streamText({ sessionId, userId, messages }, (prompt) =>
      streamText({ model: openai('gpt-4o-mini'), tools, stopWhen: stepCountIs(5), ...prompt }),
    );
    result.pipeUIMessageStreamToResponse(res);
    void stored; // settles once the whole run (every tool call and result) is stored and compacted
    return;
  }
  if (req.method === 'GET' && url.pathname === '/messages') {
    // useChat({ messages }) after a reload: the whole conversation, archived turns included.
    const ui = await memory.uiMessages(url.searchParams.get('sessionId') ?? '', { userId });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(ui));
    return;
  }
  res.writeHead(404).end();
}

createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    // An IllegalStateError here is another user's session: never reveal it.
    if (!res.headersSent) res.writeHead(error instanceof IllegalStateError ? 403 : 500);
    res.end();
  });
}).listen(3000, () => console.log('POST /chat {sessionId, text}; GET /messages?sessionId=…  on http://localhost:3000'));
