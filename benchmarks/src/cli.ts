import { SingleBar, Presets } from 'cli-progress';
import { Command, InvalidArgumentError as CommanderArgumentError, Option } from 'commander';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  applyConfigFile,
  createDefaultContenderRegistry,
  fullConfig,
  quickConfig,
  RECORDED_SOURCES,
  runBench,
  writeReport,
  type BenchConfig,
  type BenchProgress,
  type RecordedSourceName,
} from './index.js';
import { DEFAULT_PRICING, parseProbeTiming, resolvePricing } from './BenchConfig.js';
import { createDefaultLogger, defaultTokenCountEstimator } from 'session-compaction';
import { PROVIDER_PRESETS } from 'session-compaction/spi';
import { LOCAL_EMBED_MODELS, USE_LITE_INSTALL, type LocalEmbedModelName } from './embeddings/localEmbedModel.js';
import { readJson } from './loaders/readJson.js';
import { renderHeadline } from './report/renderHeadline.js';
import { CHARTS_INSTALL, loadChartRenderer } from './report/loadChartRenderer.js';
import { defaultOutputDirectory, requireWritableOutputDirectory } from './outputDirectory.js';
import type { BenchResult } from './runBench.js';

/** Measured, not guessed; docs/benchmarking.md gives the same figure (a test holds them together). */
export const QUICK_DURATION =
  '239 s on the full recordings and 160 s on the shipped sample, most of it the scaling runs (measured on 2 cores at load average 13)';
// The same relative path from src/ (tsx) and from dist/ (the published build).
const SAMPLE = fileURLToPath(new URL('../data/recorded-sample.json', import.meta.url));

function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function positiveList(value: string): number[] {
  const numbers = list(value).map(Number);
  if (numbers.length === 0 || !numbers.every((n) => Number.isInteger(n) && n > 0)) {
    throw new CommanderArgumentError('expected comma-separated positive integers, e.g. 4000,8000');
  }
  return numbers;
}

function positive(value: string): number {
  return positiveList(value)[0]!;
}

/** A progress bar on stderr, so stdout stays clean for the summary (and for pipes). */
function progressBar(): BenchProgress {
  let bar: SingleBar | null = null;
  return {
    start(total, phase) {
      bar = new SingleBar(
        {
          format: `${phase.padEnd(7)} [{bar}] {percentage}% | {value}/{total} | {eta_formatted} left | {label}`,
          stream: process.stderr,
          hideCursor: true,
          // Not a terminal (CI logs, redirected stderr): one line every 10 s instead of nothing.
          noTTYOutput: true,
          notTTYSchedule: 10_000,
        },
        Presets.shades_classic,
      );
      bar.start(total, 0, { label: '' });
    },
    tick(label) {
      bar?.increment(1, { label: label.length > 60 ? label.slice(0, 57) + '...' : label });
    },
    stop() {
      bar?.stop();
      bar = null;
    },
  };
}

interface BenchFlags {
  quick?: boolean;
  config?: string;
  data?: string[];
  out?: string;
  force?: boolean;
  budgets?: number[];
  strategies?: string[];
  sources?: string[];
  maxSessions?: number;
  probeAt?: string;
  repository?: 'memory' | 'sqlite';
  model?: string;
  baseUrl?: string;
  embedModel?: string;
  embedBaseUrl?: string;
  embedLocal?: LocalEmbedModelName;
  scaling?: boolean;
  scalingSizes?: number[];
  dateHeaders?: boolean;
  speakerNames?: boolean;
  recordedTimes?: boolean;
  participantNames?: boolean;
  list?: boolean;
  pricing?: string[];
}

function buildConfig(flags: BenchFlags, argv: readonly string[]): BenchConfig {
  // The full recordings are not shipped: RECORDED_DIR names a directory of them (docs/benchmarking.md).
  const recorded = process.env.RECORDED_DIR;
  const defaultData = recorded !== undefined && recorded !== '' && existsSync(recorded) ? [recorded] : [SAMPLE];
  const defaultOut = defaultOutputDirectory(process.cwd());
  let config = (flags.quick === true ? quickConfig : fullConfig)(defaultData, defaultOut);
  if (flags.config !== undefined) config = applyConfigFile(config, readJson(flags.config), flags.config);
  if (flags.data !== undefined) config.data = flags.data;
  if (flags.out !== undefined) config.outDir = flags.out;
  if (flags.budgets !== undefined) config.budgets = flags.budgets;
  if (flags.strategies !== undefined) config.contenders = flags.strategies.map((name) => ({ name }));
  if (flags.sources !== undefined) {
    const bad = flags.sources.filter((s) => !(RECORDED_SOURCES as readonly string[]).includes(s));
    if (bad.length > 0)
      throw new CommanderArgumentError(`unknown source(s) ${bad.join(', ')}; known: ${RECORDED_SOURCES.join(', ')}`);
    config.sources = flags.sources as RecordedSourceName[];
  }
  if (flags.maxSessions !== undefined) config.maxSessionsPerDataset = flags.maxSessions;
  if (flags.probeAt !== undefined) config.probeAt = parseProbeTiming(flags.probeAt);
  if (flags.repository !== undefined) config.repository = flags.repository;
  if (flags.model !== undefined) config.summarizer = { ...config.summarizer, model: flags.model };
  if (flags.baseUrl !== undefined) config.summarizer = { ...config.summarizer, baseURL: flags.baseUrl };
  if (flags.embedModel !== undefined)
    config.embeddings = { model: flags.embedModel, ...(flags.embedBaseUrl !== undefined ? { baseURL: flags.embedBaseUrl } : {}) };
  if (flags.embedLocal !== undefined) {
    if (flags.embedModel !== undefined) throw new CommanderArgumentError('--embed-local and --embed-model exclude each other');
    config.embeddings = { local: flags.embedLocal };
  }
  if (flags.dateHeaders === true) config.locomoDateHeaders = true;
  if (flags.speakerNames === true) config.locomoSpeakerNames = true;
  if (flags.recordedTimes === false) config.recordedTimes = false;
  if (flags.participantNames === false) config.participantNames = false;
  if (flags.pricing !== undefined) config.pricing = flags.pricing;
  if (flags.scaling === false) config.scaling = null;
  else if (flags.scalingSizes !== undefined && config.scaling !== null)
    config.scaling = { ...config.scaling, sizes: flags.scalingSizes };
  resolvePricing(config.pricing);
  requireWritableOutputDirectory(config.outDir, flags.force === true);
  config.command = ['session-compaction-bench', ...argv].join(' ');
  return config;
}

async function bench(flags: BenchFlags, argv: readonly string[]): Promise<void> {
  const registry = await createDefaultContenderRegistry();
  if (flags.list === true) {
    for (const c of registry.list()) process.stdout.write(`${c.name.padEnd(26)} ${c.kind.padEnd(9)} ${c.description}\n`);
    return;
  }
  const config = buildConfig(flags, argv);
  const result = await runBench(config, {
    registry,
    estimator: defaultTokenCountEstimator(),
    // Summariser failures and CAS skips are part of what is measured; only errors reach the terminal.
    logger: createDefaultLogger({ level: 'error' }),
    progress: progressBar(),
  });
  const files = await writeReport(result, config.outDir);
  const charts = await loadChartRenderer();
  process.stdout.write(
    `${renderHeadline(result)}\n${notRun(result, 'unavailable' in charts ? charts.unavailable : null)}` +
      `Finished in ${(result.durationMs / 1000).toFixed(1)} s. Wrote:\n${files.map((f) => `  ${f}`).join('\n')}\n`,
  );
}

/** What this run could not measure, and how to get it: missing optional peers, charts, inapplicable pairs. */
export function notRun(result: Pick<BenchResult, 'skipped'>, chartsUnavailable: string | null): string {
  const rows: [string, string, string][] = result.skipped.map((s) => [
    s.dataset === 'all' ? s.contender : `${s.contender} on ${s.dataset}`,
    s.reason,
    s.install ?? '',
  ]);
  if (chartsUnavailable !== null) rows.push(['charts', chartsUnavailable, CHARTS_INSTALL]);
  if (rows.length === 0) return '';
  const width = Math.max(...rows.map((r) => r[0].length));
  const lines = rows.map(
    ([what, why, install]) => `  ${what.padEnd(width)}  ${why}${install === '' ? '' : `; install: ${install}`}`,
  );
  return `Not run:\n${lines.join('\n')}\n\n`;
}

/**
 * The `session-compaction-bench` program; `argv` as in `process.argv` (its arguments are recorded in the report).
 * Usage errors and `--help` end in a CommanderError, which `main` turns into an exit code.
 */
export function createBenchProgram(argv: readonly string[]): Command {
  return new Command()
    .name('session-compaction-bench')
    .description('Replay recorded sessions through every compaction strategy and peer library; write tables and charts.')
    .showHelpAfterError()
    .exitOverride()
    .option('--quick', `a few sessions per source, budgets 4k and 8k, scaling up to 10k events (${QUICK_DURATION})`)
    .option('--config <file>', 'JSON config file (see docs/benchmarking.md); flags override it')
    .option(
      '--data <path...>',
      'recorded-data directories (locomo/, tau-bench/, mini-swe-agent-deepseek/; see docs/benchmarking.md), neutral-format JSON files, or JSON Lines exports of `session-compaction export` (default $RECORDED_DIR when set, else the shipped sample)',
    )
    .option(
      '--out <dir>',
      'where results.md, results.json and the SVG charts go (default: a new folder ./bench-results/<UTC date>T<hhmm>); a folder that already holds files is refused unless --force',
    )
    .option('--force', 'write into an --out folder that already holds files, overwriting them')
    .option('--budgets <tokens>', 'comma-separated token budgets', positiveList)
    .option('--strategies <names>', 'comma-separated strategies and peers (see --list)', list)
    .option('--sources <names>', `comma-separated sources of a data directory: ${RECORDED_SOURCES.join(', ')}`, list)
    .option('--max-sessions <n>', 'replay at most n sessions per dataset (evenly spaced)', positive)
    .option('--probe-at <when>', "ask probes at the 'end' of the session, or N model calls after their last evidence")
    .addOption(new Option('--repository <kind>', 'repository the replays run on').choices(['memory', 'sqlite']))
    .option('--model <name>', 'summarise with this model at an OpenAI-compatible endpoint (OPENAI_BASE_URL, OPENAI_API_KEY)')
    .option('--base-url <url>', 'endpoint for --model (default OPENAI_BASE_URL)')
    .option('--embed-model <name>', 'embedding model for the *-recall-hybrid contenders (OPENAI_BASE_URL, OPENAI_API_KEY)')
    .option('--embed-base-url <url>', 'endpoint for --embed-model (default OPENAI_BASE_URL)')
    .addOption(
      new Option(
        '--embed-local <model>',
        `local embedding model for the *-recall-hybrid contenders, read from its installed package (${USE_LITE_INSTALL})`,
      ).choices(LOCAL_EMBED_MODELS),
    )
    .option('--no-scaling', 'skip the compaction-cost-vs-length benchmark')
    .option('--scaling-sizes <events>', 'comma-separated session lengths for the scaling benchmark', positiveList)
    .option('--date-headers', "LoCoMo: add a 'DATE: …' system event before each sub-session")
    .option('--no-recorded-times', 'replay events one second apart instead of at the times their dataset recorded')
    .option(
      '--speaker-names',
      "LoCoMo: start each turn's text with its speaker's name, as LoCoMo's QA prompt does (instead of the message's `name`)",
    )
    .option('--no-participant-names', "replay turns without their speaker as the message's `name` (LoCoMo's speakers)")
    .option(
      '--pricing <presets>',
      `comma-separated provider presets every call is priced under (default ${DEFAULT_PRICING.join(',')}; known: ${Object.keys(PROVIDER_PRESETS).join(', ')})`,
      list,
    )
    .option('--list', 'list the strategies and peers that can be benchmarked, and exit')
    .action(async (flags: BenchFlags) => {
      await bench(flags, argv.slice(2));
    });
}
