/**
 * Token reduction of each stage of a compaction pipeline (observation masking → rolling summary) on the
 * recorded τ-bench and mini-swe-agent conversations under RECORDED_DIR (docs/benchmarking.md).
 *
 *   npx tsx benchmarks/pipeline-stages.ts [--budget 8000]
 *
 * Two runs per source: with the budget (the pipeline stops as soon as a session fits), and forced (every
 * stage runs) to show what each stage removes on its own input. Tokens: js-tiktoken o200k_base.
 * The summariser is the offline ExtractiveSummarizer (1000-token summaries): a model would write shorter,
 * better summaries, so the summary stage's figures are conservative.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadMiniSweAgent } from './src/loaders/loadMiniSweAgent.js';
import { loadTauBench } from './src/loaders/loadTauBench.js';
import type { RecordedSession } from './src/recorded/RecordedSession.js';
import { toMessage } from './src/recorded/toMessage.js';
import {
  CompactionPipeline,
  CompactionRequest,
  ExtractiveSummarizer,
  ObservationMaskingCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  TokenCountCompactionStrategy,
  Session,
  SessionEvent,
  createDefaultLogger,
  defaultTokenCountEstimator,
} from 'session-compaction';
import { estimateEventsTokens } from 'session-compaction/spi';
import { numberArg } from './support/args.js';

const budget = numberArg('budget', '8000');
const dir = resolve(process.env.RECORDED_DIR ?? '.');
const estimator = defaultTokenCountEstimator();

/** mask → summarise (the acceptance pipeline), and mask → token budget with the tool-pair-safe cut. */
const PIPELINES = {
  'mask → summarise': (maxTokens: number) =>
    new CompactionPipeline({
      stages: [
        new ObservationMaskingCompactionStrategy(),
        new RecursiveSummarizationCompactionStrategy({
          chatClient: new ExtractiveSummarizer({ maxTokens: 1000 }),
          maxEventsToKeep: 12,
          overlapSize: 2,
          logger: createDefaultLogger({ silent: true }),
        }),
      ],
      maxTokens,
    }),
  'mask → token budget (tool-pair-safe)': (maxTokens: number) =>
    new CompactionPipeline({
      stages: [
        new ObservationMaskingCompactionStrategy(),
        new TokenCountCompactionStrategy({ maxTokens: Math.max(maxTokens, budget), cutWithinTurn: 'tool-pair-safe' }),
      ],
      maxTokens,
    }),
} as const;

function toEvents(s: RecordedSession): SessionEvent[] {
  return s.events.map((e, i) =>
    SessionEvent.create({ sessionId: s.sessionId, id: `${s.sessionId}#${i}`, message: toMessage(e) }),
  );
}

interface StageTotals {
  sessions: number;
  before: number;
  after: number;
}

async function measure(name: string, sessions: readonly RecordedSession[]): Promise<void> {
  for (const [pipelineName, make] of Object.entries(PIPELINES))
    for (const [label, maxTokens] of [
      [`budget ${budget}`, budget],
      ['forced (every stage runs)', 1],
    ] as const) {
      const p = make(maxTokens);
      const stages: StageTotals[] = [];
      let before = 0;
      let after = 0;
      let fit = 0;
      let max = 0;
      const started = performance.now();
      for (const s of sessions) {
        const events = toEvents(s);
        const run = await p.run(CompactionRequest.of(Session.create({ id: s.sessionId, userId: 'bench' }), events));
        const b = estimateEventsTokens(events, estimator);
        const a = estimateEventsTokens(run.result.compactedEvents, estimator);
        before += b;
        after += a;
        max = Math.max(max, a);
        if (a <= budget) fit++;
        for (const st of run.stages) {
          const t = (stages[st.index] ??= { sessions: 0, before: 0, after: 0 });
          t.sessions++;
          t.before += st.tokensBefore;
          t.after += st.tokensAfter;
        }
      }
      const ms = performance.now() - started;
      console.log(`\n${name} — ${sessions.length} sessions — ${pipelineName} — ${label}`);
      console.log(
        `  window: ${before.toLocaleString()} → ${after.toLocaleString()} tokens (−${pct(before, after)}), ${fit}/${sessions.length} under ${budget}, largest after ${max.toLocaleString()}, ${ms.toFixed(0)} ms`,
      );
      const names = ['1 observation masking', pipelineName.includes('summarise') ? '2 recursive summary' : '2 token budget'];
      stages.forEach((t, i) => {
        if (t === undefined) return;
        console.log(
          `  stage ${names[i]!.padEnd(24)} ran on ${String(t.sessions).padStart(3)} sessions: ${t.before.toLocaleString().padStart(11)} → ${t.after.toLocaleString().padStart(11)} tokens (−${pct(t.before, t.after)})`,
        );
      });
    }
}

const pct = (before: number, after: number) => (before === 0 ? '0%' : `${(((before - after) / before) * 100).toFixed(1)}%`);

const tau = join(dir, 'tau-bench', 'gpt-4o-airline.json');
const mini = join(dir, 'mini-swe-agent-deepseek');
if (!existsSync(tau) && !existsSync(join(mini, 'output'))) {
  console.error(`no recordings under ${dir} (set RECORDED_DIR)`);
  process.exit(1);
}
if (existsSync(tau)) await measure('τ-bench airline (GPT-4o)', loadTauBench(tau).sessions);
else console.log(`skipped τ-bench: ${tau} not found`);
if (existsSync(join(mini, 'output'))) await measure('mini-swe-agent (deepseek-chat)', loadMiniSweAgent(mini).sessions);
else console.log(`skipped mini-swe-agent: ${mini} not found`);
