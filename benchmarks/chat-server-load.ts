/**
 * A bounded loopback load test of examples/chat-server against a fake OpenAI-compatible model server: requests
 * per second, p99 latency, error rate, and the process's memory after each of several identical rounds
 * (memory is stable when later rounds leave the heap where the earlier ones did). A third round mixes in
 * hostile requests (oversized, malformed, anonymous) and reports the status codes they got. Everything listens
 * on 127.0.0.1 only, and every round stops by itself: after `--requests` requests or `--max-seconds`.
 *
 *   node --expose-gc --import tsx benchmarks/chat-server-load.ts [--requests 2000] [--connections 16]
 *        [--conversations 100] [--max-seconds 60] [--rounds 3] [--repository sqlite|memory]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { buildChatServer, USER_HEADER } from '../examples/chat-server/app.js';
import type { ChatServerConfig } from '../examples/chat-server/config.js';
import { createChatContainer } from '../examples/chat-server/container.js';
import { createDefaultLogger } from 'session-compaction';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../test/support/fakeOpenAIServer.js';
import { arg, numberArg } from './support/args.js';

const REQUESTS = numberArg('requests', '2000');
const CONNECTIONS = numberArg('connections', '16');
const CONVERSATIONS = numberArg('conversations', '100');
const MAX_SECONDS = numberArg('max-seconds', '60');
const ROUNDS = Math.max(2, numberArg('rounds', '3'));
const REPOSITORY = arg('repository', 'sqlite');
const MAX_BODY = 64 * 1024;

const gc = (globalThis as { gc?: () => void }).gc;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
let modelCalls = 0;
/** The fake model server records every request; that record must not count as the chat server's memory. */
function forgetRequests(fake: FakeOpenAIServer): void {
  modelCalls += fake.requests.length;
  fake.requests.length = 0;
  fake.requestHeaders.length = 0;
}

function memory(): { heap: number; rss: number } {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

type Hostility = 'valid' | 'oversized' | 'malformed' | 'anonymous';

/** One round of `amount` POST /v1/query, bounded by MAX_SECONDS; `kind(i)` decides what request i is. */
async function round(url: string, amount: number, kind: (i: number) => Hostility): Promise<autocannon.Result> {
  let i = 0;
  const instance = autocannon({
    url: `${url}/v1/query`,
    connections: CONNECTIONS,
    amount,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => {
          const n = i++;
          const conversation = n % CONVERSATIONS;
          const k = kind(n);
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (k !== 'anonymous') headers[USER_HEADER] = `user-${conversation}`;
          const body =
            k === 'oversized'
              ? JSON.stringify({ query: 'x'.repeat(MAX_BODY * 2) })
              : k === 'malformed'
                ? '{"query": "unterminated'
                : JSON.stringify({ conversation_id: `load-${conversation}`, query: `question ${n} about the plan` });
          return { ...request, headers, body };
        },
      },
    ],
  });
  // Called without a callback, autocannon returns a promise that is also the running instance.
  const stop = setTimeout(() => (instance as unknown as { stop(): void }).stop(), MAX_SECONDS * 1000);
  try {
    return await instance;
  } finally {
    clearTimeout(stop);
  }
}

function describe(name: string, r: autocannon.Result): Record<string, string | number> {
  const total = r.requests.total;
  const failed = r.errors + r.timeouts + r.non2xx;
  return {
    round: name,
    requests: total,
    'requests/s': Math.round(r.requests.average),
    'p50 ms': r.latency.p50,
    'p99 ms': r.latency.p99,
    'max ms': r.latency.max,
    'error rate': `${((failed / Math.max(total, 1)) * 100).toFixed(2)}%`,
    seconds: Number((r.duration ?? 0).toFixed(1)),
  };
}

async function main(): Promise<void> {
  const fake = await startFakeOpenAIServer();
  fake.respondWith((body) =>
    body.model === 'summary-model'
      ? { content: 'Summary: the user asked numbered questions about the plan.' }
      : { content: 'Here is a short answer about the plan, with one next step.' },
  );
  const dir = mkdtempSync(join(tmpdir(), 'chat-load-'));
  const config: ChatServerConfig = {
    openaiBaseURL: fake.url,
    openaiApiKey: 'test',
    model: 'chat-model',
    summaryModel: 'summary-model',
    repository: REPOSITORY as ChatServerConfig['repository'],
    sqlitePath: join(dir, 'sessions.db'),
    contextWindowTokens: 2000,
    thresholdRatio: 0.7,
    keepEvents: 6,
    recallTools: false,
    maxToolRounds: 0,
    logLevel: 'error',
    maxBodyBytes: MAX_BODY,
  };
  const app = buildChatServer(createChatContainer(config, { logger: createDefaultLogger({ silent: true }) }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    await round(url, Math.min(200, REQUESTS), () => 'valid');
    forgetRequests(fake);
    const memories = [{ after: 'warm-up', ...memory() }];
    const results: autocannon.Result[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      results.push(await round(url, REQUESTS, () => 'valid'));
      forgetRequests(fake);
      memories.push({ after: `round ${r}`, ...memory() });
    }
    const kinds: Hostility[] = ['valid', 'oversized', 'malformed', 'anonymous'];
    const hostile = await round(url, Math.min(REQUESTS, 1000), (n) => kinds[n % kinds.length]!);

    console.log(
      `chat-server load: ${REQUESTS} requests per round, ${CONNECTIONS} connections, ${CONVERSATIONS} conversations, ` +
        `repository ${config.repository}, Node ${process.version}${gc === undefined ? ' (no --expose-gc: memory is noisy)' : ''}`,
    );
    console.table(results.map((r, i) => describe(String(i + 1), r)));
    console.table(memories.map((m) => ({ after: m.after, heap: mb(m.heap), rss: mb(m.rss) })));
    const statuses = Object.fromEntries(Object.entries(hostile.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]));
    console.log(
      `hostile mix (1/4 each valid, oversized, malformed, anonymous): ${hostile.requests.total} requests, ` +
        `status codes ${JSON.stringify(statuses)}, ${hostile.errors} socket errors, ${hostile.timeouts} timeouts`,
    );
    forgetRequests(fake);
    console.log(`model calls: ${modelCalls}`);
  } finally {
    await app.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
