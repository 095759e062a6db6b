// What a summarising compaction costs in tokens on real tool-calling sessions: the τ-bench airline recordings
// ($RECORDED_DIR/tau-bench/gpt-4o-airline.json, 200 GPT-4o sessions) replayed message by message (system messages
// left out), with `service.compact(id, new TokenCountTrigger({ threshold }), strategy)` after each append, through
// `OpenAIChatClient` to a loopback OpenAI-compatible fake that answers with the `ExtractiveSummarizer` (256-token
// summaries) and reports usage counted with o200k_base. Side by side in one run: recursive summarisation
// (`maxEventsToKeep` 10, overlap 2) and additive summarisation (`keepTurns` 4, `maxKeptTokens` 1,500,
// `maxSummaryTokens` 1,000). The token counts do not depend on the machine.
//
//   RECORDED_DIR=<recorded data> npx tsx --conditions=session-compaction-source benchmarks/summary-cost.ts
//        [--threshold 3000] [--max-sessions 200]
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  AdditiveSummarizationCompactionStrategy,
  DefaultSessionService,
  EventFilter,
  ExtractiveSummarizer,
  InMemorySessionRepository,
  OpenAIChatClient,
  RecursiveSummarizationCompactionStrategy,
  TokenCountTrigger,
  createDefaultLogger,
  defaultTokenCountEstimator,
  type CompactionStrategy,
} from 'session-compaction';
import { estimateEventsTokens } from 'session-compaction/spi';
import { startFakeOpenAIServer } from '../test/support/fakeOpenAIServer.js';
import { loadTauBench } from './src/loaders/loadTauBench.js';
import { toMessage } from './src/recorded/toMessage.js';
import { numberArg } from './support/args.js';

const THRESHOLD = numberArg('threshold', '3000');
const MAX_SESSIONS = numberArg('max-sessions', '200');
const TAU = path.resolve(process.env.RECORDED_DIR ?? '.', 'tau-bench', 'gpt-4o-airline.json');
const logger = createDefaultLogger({ silent: true });
const estimator = defaultTokenCountEstimator();

if (!existsSync(TAU)) {
  console.error(`τ-bench recording not found at ${TAU} (set RECORDED_DIR)`);
  process.exit(1);
}
const sessions = loadTauBench(TAU).sessions.slice(0, MAX_SESSIONS);
const extractive = new ExtractiveSummarizer();
const fake = await startFakeOpenAIServer();
fake.respondWith(async (body) => {
  const messages = body.messages ?? [];
  const text = (role: string) =>
    messages
      .filter((m) => m.role === role)
      .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
      .join('\n');
  const system = text('system');
  const user = text('user');
  const reply = await extractive.call({ ...(system === '' ? {} : { system }), user });
  return {
    content: reply,
    usage: {
      prompt_tokens: estimator.estimate(`${system}\n${user}`),
      completion_tokens: estimator.estimate(reply ?? ''),
    },
  };
});

const contenders: Array<[string, (client: OpenAIChatClient) => CompactionStrategy]> = [
  [
    'recursive, `maxEventsToKeep` 10, overlap 2',
    (chatClient) => new RecursiveSummarizationCompactionStrategy({ chatClient, maxEventsToKeep: 10, overlapSize: 2, logger }),
  ],
  [
    'additive, `keepTurns` 4, `maxKeptTokens` 1,500, `maxSummaryTokens` 1,000',
    (chatClient) =>
      new AdditiveSummarizationCompactionStrategy({
        chatClient,
        keepTurns: 4,
        maxKeptTokens: 1500,
        maxSummaryTokens: 1000,
        logger,
      }),
  ],
];

const f0 = (n: number) => Math.round(n).toLocaleString('en-US');
const messages = sessions.reduce((n, s) => n + s.events.filter((e) => e.role !== 'system').length, 0);
console.log(`τ-bench airline: ${sessions.length} sessions, ${f0(messages)} non-system messages; trigger ${f0(THRESHOLD)} tokens`);
console.log('');
console.log(
  '| strategy | compactions (= calls) | input tokens / call | output tokens / call | tokens archived | avg. active window at end | avg. full log at end |',
);
console.log('| --- | --: | --: | --: | --: | --: | --: |');
try {
  for (const [label, make] of contenders) {
    const client = new OpenAIChatClient({ model: 'fake-summariser', baseURL: fake.url, apiKey: 'test', logger });
    const strategy = make(client);
    const repository = new InMemorySessionRepository();
    const service = new DefaultSessionService(repository, { logger });
    const trigger = new TokenCountTrigger({ threshold: THRESHOLD });
    let compactions = 0;
    let archived = 0;
    let active = 0;
    let full = 0;
    for (const recorded of sessions) {
      const session = await service.create({ userId: 'bench' });
      for (const event of recorded.events) {
        if (event.role === 'system') continue;
        await service.appendMessage(session.id, toMessage(event));
        const result = await service.compact(session.id, trigger, strategy);
        if (result.archivedEvents.length > 0) {
          compactions++;
          archived += estimateEventsTokens(result.archivedEvents, estimator);
        }
      }
      active += estimateEventsTokens(await repository.findEvents(session.id, EventFilter.active()), estimator);
      const all = await repository.findEvents(session.id, EventFilter.all());
      full += estimateEventsTokens(
        all.filter((e) => !e.isSynthetic()),
        estimator,
      );
    }
    const usage = client.totalUsage;
    console.log(
      `| ${label} | ${compactions} (${usage.calls} calls) | ${f0(usage.promptTokens / usage.calls)} | ${f0(usage.completionTokens / usage.calls)} | ` +
        `${f0(archived)} | ${f0(active / sessions.length)} | ${f0(full / sessions.length)} |`,
    );
  }
} finally {
  await fake.close();
}
