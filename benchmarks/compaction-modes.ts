// Turn latency with a slow summariser: compaction inline (the turn waits for the summary), in background
// (`compaction: { mode: 'background' }`), and no compaction at all — in the same run, on the same machine.
//
//   node --import tsx --conditions=session-compaction-source benchmarks/compaction-modes.ts \
//     [--sessions 12] [--turns 40] [--chat-ms 150] [--summary-ms 2000] [--think-ms 250]
//
// A loopback OpenAI-compatible fake answers the chat model after --chat-ms and the summariser after
// --summary-ms. --sessions conversations run at once, a third in each mode (session k in mode k mod 3), each
// --turns user turns with --think-ms between a reply and the next question. Compaction: a token trigger that
// fires every few turns, recursive summarisation through OpenAIChatClient, a context window well above the
// trigger (the "prepare" threshold is the trigger; a turn would wait for a summary only past the window).
// Per mode: the time of each `memory.call`, its p50 / p99, the summaries committed, the summariser calls.
// Writes docs/benchmarks/compaction-modes.md.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import {
  createDefaultLogger,
  DefaultSessionService,
  OpenAIChatClient,
  RecursiveSummarizationCompactionStrategy,
  SqliteSessionRepository,
  TokenCountTrigger,
} from 'session-compaction';
import { OpenAISessionMemory } from 'session-compaction/openai';
import { startFakeOpenAIServer } from '../test/support/fakeOpenAIServer.js';
import { numberArg } from './support/args.js';

const SESSIONS = numberArg('sessions', '12');
const TURNS = numberArg('turns', '40');
const CHAT_MS = numberArg('chat-ms', '150');
const SUMMARY_MS = numberArg('summary-ms', '2000');
const THINK_MS = numberArg('think-ms', '250');
const OUT = fileURLToPath(new URL('../docs/benchmarks/compaction-modes.md', import.meta.url));
const MODES = ['none', 'inline', 'background'] as const;
type Mode = (typeof MODES)[number];

const logger = createDefaultLogger({ silent: true });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (xs: readonly number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const question = (session: number, turn: number) =>
  `Session ${session}, question ${turn}: how should the deployment pipeline handle ${'a failing canary stage, its rollback and the alerts it raises, '.repeat(3)}?`;

const server = await startFakeOpenAIServer();
server.respondWith((body) =>
  body.model === 'summariser'
    ? {
        content: 'Summary: the user asked about canary failures, rollbacks and alerts; answers covered each stage.',
        delayMs: SUMMARY_MS,
      }
    : {
        content: `Roll back the canary, page the owner, keep the alert open until the stage is green. ${'Details follow. '.repeat(8)}`,
        delayMs: CHAT_MS,
      },
);
const client = new OpenAI({ baseURL: server.url, apiKey: 'bench', maxRetries: 0 });
const repository = new SqliteSessionRepository({ path: ':memory:', logger });
const service = new DefaultSessionService(repository, { logger });

function memoryFor(mode: Mode): OpenAISessionMemory {
  const compaction =
    mode === 'none'
      ? {}
      : {
          compactionTrigger: new TokenCountTrigger({ threshold: 1200 }),
          compactionStrategy: new RecursiveSummarizationCompactionStrategy({
            chatClient: new OpenAIChatClient({ client, model: 'summariser', timeoutMs: SUMMARY_MS * 5, logger }),
            maxEventsToKeep: 4,
            overlapSize: 1,
            logger,
          }),
          contextWindowTokens: 16_000,
          compaction: { mode: mode === 'background' ? ('background' as const) : ('inline' as const) },
        };
  return new OpenAISessionMemory({
    sessionService: service,
    client,
    model: 'chat',
    metadataStore: repository,
    timeoutMs: 60_000,
    logger,
    ...compaction,
  });
}

const memories = Object.fromEntries(MODES.map((m) => [m, memoryFor(m)])) as Record<Mode, OpenAISessionMemory>;
const latencies: Record<Mode, number[]> = { none: [], inline: [], background: [] };
const summaries: Record<Mode, number> = { none: 0, inline: 0, background: 0 };
const modeOf = new Map<string, Mode>();
let racesLost = 0;
service.events.on('compactionSkipped', (e) => {
  if (modeOf.get(e.sessionId) === 'background' && e.reason === 'cas-conflict') racesLost++;
});
service.events.on('compactionCompleted', (e) => {
  const mode = modeOf.get(e.sessionId);
  if (mode !== undefined && e.result.archivedEvents.length > 0) summaries[mode]++;
});

// Warm-up outside the measurement: the tokenizer, the SQLite statements, the JIT, the HTTP connections.
for (const mode of MODES) {
  for (let t = 1; t <= 3; t++)
    await memories[mode].call({ sessionId: `warm-${mode}`, messages: [{ role: 'user', content: question(-1, t) }] });
}
await memories.background.waitForBackgroundCompactions();
const summariesBefore = server.requests.filter((r) => r.model === 'summariser').length;

const load = os.loadavg()[0]!;
const started = performance.now();
await Promise.all(
  Array.from({ length: SESSIONS }, async (_, s) => {
    const mode = MODES[s % MODES.length]!;
    const sessionId = `bench-${mode}-${s}`;
    modeOf.set(sessionId, mode);
    // Staggered starts, so that sessions do not compact in lockstep.
    await sleep((s * THINK_MS) / SESSIONS);
    for (let t = 1; t <= TURNS; t++) {
      const t0 = performance.now();
      await memories[mode].call({ sessionId, messages: [{ role: 'user', content: question(s, t) }] });
      latencies[mode].push(performance.now() - t0);
      await sleep(THINK_MS);
    }
  }),
);
await memories.background.waitForBackgroundCompactions();
const elapsed = (performance.now() - started) / 1000;
const summariserCalls = server.requests.filter((r) => r.model === 'summariser').length - summariesBefore;
await server.close();
await repository.close();

const base = percentile(latencies.none, 99);
const rows = MODES.map((mode) => {
  const xs = latencies[mode];
  const p99 = percentile(xs, 99);
  return `| ${mode === 'none' ? 'no compaction' : mode === 'inline' ? 'inline (blocking)' : 'background'} | ${xs.length} | ${percentile(xs, 50).toFixed(0)} ms | ${p99.toFixed(0)} ms | ${(p99 / base).toFixed(2)}× | ${Math.max(...xs).toFixed(0)} ms | ${summaries[mode]} |`;
});
const lines = [
  '# Turn latency: compaction inline, in background, and none',
  '',
  `Generated by \`node --import tsx --conditions=session-compaction-source benchmarks/compaction-modes.ts --sessions ${SESSIONS} --turns ${TURNS} --chat-ms ${CHAT_MS} --summary-ms ${SUMMARY_MS} --think-ms ${THINK_MS}\``,
  `on ${new Date().toISOString().slice(0, 10)} (Node ${process.version}, ${os.cpus().length} CPU cores shared with other work, load average ${load.toFixed(1)} at the start, ${os.loadavg()[0]!.toFixed(1)} at the end; ${elapsed.toFixed(0)} s).`,
  '',
  `${SESSIONS} conversations at once against a loopback fake model (chat replies after ${CHAT_MS} ms, the summariser after`,
  `${SUMMARY_MS} ms), a third in each mode, ${TURNS} turns each with ${THINK_MS} ms between a reply and the next question;`,
  'SQLite in memory, token trigger at 1,200 tokens, recursive summarisation keeping 4 events, context window 16,000.',
  'Latency is the time of one `memory.call` (read, store, model call, store, compaction when inline), after three',
  'warm-up turns per mode that are not counted.',
  '',
  '| mode | turns | p50 | p99 | p99 ÷ no compaction | max | summaries committed |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows,
  '',
  `Summariser calls in the measured run: ${summariserCalls}, for ${summaries.inline + summaries.background} summaries committed. Background`,
  `summaries that lost their version race to the next turn's appends: ${racesLost}, each re-committed on top of them rather`,
  'than summarised again.',
  '',
];
writeFileSync(OUT, lines.join('\n'));
console.log(lines.join('\n'));
