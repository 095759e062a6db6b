import { Option, type Command } from 'commander';
import {
  checkContenderOptions,
  createDefaultContenderRegistry,
  createSummarizer,
  type OptionKind,
  type OptionSpec,
} from 'session-compaction-bench';
import {
  InvalidArgumentError,
  DefaultSessionService,
  defaultTokenCountEstimator,
  EventFilter,
  CompactionProfileRegistry,
  type CompactionStrategyLike,
  type CompactionTriggerLike,
  loadConfigurationFile,
  ResolvedConfiguration,
  type CompactionRange,
} from 'session-compaction';
import {
  estimateEventsTokens,
  type PipelineStageReport as CompactionStageReport,
  type CompactionRecordRange,
} from 'session-compaction/spi';
import type { AdminContext, UrlFlags } from '../AdminContext.js';
import { printResult } from '../CliIo.js';
import { withUrlOptions } from './urlOptions.js';
import { parseDuration, parseTime } from '../admin/durations.js';

const DEFAULT_BUDGET = 8000;

interface CompactFlags extends UrlFlags {
  strategy?: string;
  profile?: string;
  config?: string;
  budget?: string;
  dryRun?: boolean;
  force?: boolean;
  callModel?: boolean;
  model?: string;
  baseUrl?: string;
  set?: string[];
  from?: string;
  to?: string;
  since?: string;
  until?: string;
  olderThan?: string;
  snap?: string;
}

/**
 * The range the flags ask for; undefined when no range flag is given. The service checks it (so that its
 * messages are the API's) before it reads the session.
 */
function requestedRange(flags: CompactFlags): CompactionRange | undefined {
  const range: Record<string, unknown> = {};
  if (flags.from !== undefined) range.fromEventId = flags.from;
  if (flags.to !== undefined) range.toEventId = flags.to;
  if (flags.since !== undefined) range.since = parseTime(flags.since, '--since');
  if (flags.until !== undefined) range.until = parseTime(flags.until, '--until');
  if (flags.olderThan !== undefined) range.olderThanMs = parseDuration(flags.olderThan, '--older-than');
  if (flags.snap !== undefined) range.snap = flags.snap;
  return Object.keys(range).length === 0 ? undefined : (range as CompactionRange);
}

/** The range as the user gave it, for the report: flags in their command-line spelling. */
function describeRange(flags: CompactFlags, range: CompactionRange): string {
  const parts = [
    flags.from !== undefined ? `--from ${flags.from}` : '',
    flags.to !== undefined ? `--to ${flags.to}` : '',
    range.since !== undefined ? `--since ${range.since.toISOString()}` : '',
    range.until !== undefined ? `--until ${range.until.toISOString()}` : '',
    flags.olderThan !== undefined ? `--older-than ${flags.olderThan}` : '',
  ];
  return `${parts.filter((p) => p !== '').join(' ')}, snap ${range.snap ?? 'turn'}`;
}

/** A `--set` value read as the kind of value the option takes. */
function readValue(key: string, raw: string, kind: OptionKind): unknown {
  const pair = `--set ${key}=${raw}`;
  switch (kind) {
    case 'number': {
      const n = raw.trim() === '' ? Number.NaN : Number(raw);
      if (!Number.isFinite(n)) throw new InvalidArgumentError(`${pair}: '${raw}' is not a number (${key} takes a number)`);
      return n;
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') throw new InvalidArgumentError(`${pair}: ${key} takes true or false`);
      return raw === 'true';
    case 'object':
    case 'array':
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        throw new InvalidArgumentError(
          `${pair}: ${key} takes a JSON ${kind}, e.g. --set '${key}=${kind === 'array' ? '[…]' : '{…}'}'`,
        );
      }
    default:
      return raw;
  }
}

/**
 * `--set key=value` pairs as options. With the strategy's option list (`spec`) each value is read as the kind
 * its option takes, and a key it does not list is refused with the ones it does; a profile checks its own keys,
 * so without a list numbers and booleans are recognised by their spelling.
 */
function setOptions(pairs: readonly string[], spec?: OptionSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new InvalidArgumentError(`--set expects key=value (got '${pair}')`);
    const key = pair.slice(0, eq);
    const raw = pair.slice(eq + 1);
    const kind = spec !== undefined && Object.hasOwn(spec, key) ? spec[key] : undefined;
    out[key] =
      kind !== undefined
        ? readValue(key, raw, kind)
        : raw === 'true'
          ? true
          : raw === 'false'
            ? false
            : raw !== '' && !Number.isNaN(Number(raw))
              ? Number(raw)
              : raw;
  }
  return out;
}

export function registerCompactCommand(program: Command, ctx: AdminContext): void {
  withUrlOptions(
    program
      .command('compact')
      .description(
        'Compact one session with a named strategy (the names `bench --list` shows) or compaction profile, or preview it with --dry-run; --from/--to, --since/--until or --older-than limit it to part of the active window.',
      )
      .argument('<sessionId>')
      .option(
        '--strategy <name>',
        'sliding-window, turn-window, token-count, recursive-summarization, additive-summarization, observation-masking, …',
      )
      .option(
        '--profile <name>',
        'a compaction profile: sliding-window, token-budget, recursive, additive, cache-aware, pressure-bands, or one of --config',
      )
      .option('--config <file>', 'configuration file (YAML or JSON) whose profiles, window and summariser --profile uses')
      .option(
        '--budget <tokens>',
        'context budget the strategy and its trigger are sized for (default 8000, or the configuration’s)',
      )
      .option('--set <key=value...>', 'strategy (or profile) options, e.g. --set maxEvents=30')
      .option('--force', 'compact even when the strategy’s trigger would not fire')
      .option('--dry-run', 'show what would be archived and kept; write nothing')
      .option('--call-model', 'with --dry-run: let summarising strategies call the summariser')
      .option('--from <eventId>', 'compact only from this active event on (inclusive; widened to its turn start)')
      .option('--to <eventId>', 'compact only up to this active event (inclusive; widened to its turn end)')
      .option('--since <time>', 'compact only the events at or after this ISO-8601 time (not with --from/--to)')
      .option('--until <time>', 'compact only the events at or before this ISO-8601 time (not with --from/--to)')
      .option('--older-than <duration>', 'compact only the events older than this, e.g. 7d, 12h (not with --until)')
      .option('--snap <mode>', "widen the range to whole turns ('turn', default) or only to tool pairs ('tool-pair')")
      .option(
        '--model <name>',
        'summarise with this model at an OpenAI-compatible endpoint (else the offline extractive summariser)',
      )
      .addOption(new Option('--base-url <url>', 'endpoint for --model (default OPENAI_BASE_URL)')),
  ).action(async (sessionId: string, flags: CompactFlags) => {
    if ((flags.strategy === undefined) === (flags.profile === undefined)) {
      throw new InvalidArgumentError('give either --strategy or --profile');
    }
    if (flags.config !== undefined && flags.profile === undefined) throw new InvalidArgumentError('--config needs --profile');
    const range = requestedRange(flags);
    const estimator = defaultTokenCountEstimator();
    const configuration =
      flags.config === undefined
        ? undefined
        : new ResolvedConfiguration(loadConfigurationFile(flags.config), { source: flags.config });
    const budget = Number(flags.budget ?? configuration?.contextWindowTokens ?? DEFAULT_BUDGET);
    if (!Number.isInteger(budget) || budget <= 0) throw new InvalidArgumentError('--budget must be a positive integer');
    // --model wins; else the configuration's summariser; else the offline extractive one.
    const configuredClient = flags.model === undefined ? configuration?.createChatClient(ctx.logger) : undefined;
    const summarizer =
      configuredClient !== undefined
        ? { client: configuredClient, description: `configured summariser ${configuredClient.model ?? ''}`.trim() }
        : createSummarizer(
            {
              ...(flags.model !== undefined ? { model: flags.model } : {}),
              ...(flags.baseUrl !== undefined ? { baseURL: flags.baseUrl } : {}),
            },
            estimator,
            ctx.logger,
          );
    let configured: { trigger: CompactionTriggerLike; strategy: CompactionStrategyLike };
    let usesSummarizer: boolean;
    let name: string;
    if (flags.profile !== undefined) {
      const profiles = configuration?.profiles ?? CompactionProfileRegistry.withBuiltIns();
      const setup = profiles.create(
        flags.profile,
        { contextWindowTokens: budget, chatClient: summarizer.client, tokenCountEstimator: estimator, logger: ctx.logger },
        flags.set !== undefined ? { options: setOptions(flags.set) } : {},
      );
      configured = { trigger: setup.compactionTrigger, strategy: setup.compactionStrategy };
      usesSummarizer = profiles.get(flags.profile).needsChatClient || flags.profile === 'pressure-bands';
      name = `profile ${flags.profile}`;
    } else {
      const registry = await createDefaultContenderRegistry();
      const contender = registry.get(flags.strategy!);
      if (contender.kind !== 'strategy') throw new InvalidArgumentError(`'${flags.strategy}' is a peer library, not a strategy`);
      const options = setOptions(flags.set ?? [], contender.options);
      checkContenderOptions(contender, options);
      configured = contender.create(
        { budgetTokens: budget, estimator, chatClient: summarizer.client, logger: ctx.logger },
        options,
      );
      usesSummarizer = contender.needsChatClient === true;
      name = flags.strategy!;
    }
    const trigger = flags.force === true ? () => true : configured.trigger;
    await ctx.withRepository(
      flags.url,
      { ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}) },
      async (repository, where) => {
        const service = new DefaultSessionService(repository, { logger: ctx.logger, tokenCountEstimator: estimator });
        type Outcome = 'dry-run' | 'not-triggered' | 'empty-range' | 'nothing-to-archive' | 'committed' | 'cas-lost' | 'rebased';
        let outcome: Outcome;
        let triggered: boolean;
        let before: { events: number; tokens: number };
        let after: { events: number; tokens: number };
        let archivedIds: string[];
        let modelCalled: boolean | null = null;
        let stages: readonly CompactionStageReport[] | null = null;
        // The range as the service resolved it (snapped); null when it selected nothing or nothing was compacted.
        let resolved: CompactionRecordRange | null = null;
        if (flags.dryRun === true) {
          const preview = await service.previewCompaction(sessionId, trigger, configured.strategy, {
            callModel: flags.callModel === true,
            ...(range !== undefined ? { range } : {}),
          });
          resolved = preview.range ?? null;
          outcome = !preview.triggered ? 'not-triggered' : preview.range === null ? 'empty-range' : 'dry-run';
          stages = preview.stages ?? null;
          triggered = preview.triggered;
          before = { events: preview.eventsBefore, tokens: preview.tokensBefore };
          after = { events: preview.eventsAfter, tokens: preview.tokensAfter };
          archivedIds = preview.result.archivedEvents.map((e) => e.id);
          modelCalled = preview.modelCalled ?? null;
        } else {
          const windowBefore = await repository.findEvents(sessionId, EventFilter.active());
          before = { events: windowBefore.length, tokens: estimateEventsTokens(windowBefore, estimator) };
          let skipReason: string | undefined;
          let rebased = false;
          service.events.on('compactionSkipped', (e) => (skipReason = e.reason));
          service.events.on('compactionCompleted', (e) => {
            rebased = e.rebased;
            resolved = e.range ?? null;
          });
          const result = await service.compact(sessionId, trigger, configured.strategy, range !== undefined ? { range } : {});
          const windowAfter = await repository.findEvents(sessionId, EventFilter.active());
          after = { events: windowAfter.length, tokens: estimateEventsTokens(windowAfter, estimator) };
          triggered = skipReason !== 'trigger-not-fired';
          outcome =
            skipReason === 'trigger-not-fired'
              ? 'not-triggered'
              : skipReason === 'cas-conflict'
                ? 'cas-lost'
                : skipReason === 'empty-range'
                  ? 'empty-range'
                  : skipReason !== undefined
                    ? 'nothing-to-archive'
                    : rebased
                      ? 'rebased'
                      : 'committed';
          archivedIds = outcome === 'committed' || outcome === 'rebased' ? result.archivedEvents.map((e) => e.id) : [];
          if (outcome === 'cas-lost') ctx.fail();
        }
        const report = {
          store: where,
          sessionId,
          strategy: flags.strategy ?? null,
          profile: flags.profile ?? null,
          summarizer: usesSummarizer ? summarizer.description : null,
          dryRun: flags.dryRun === true,
          outcome,
          triggered,
          before,
          after,
          archived: archivedIds.length,
          archivedIds,
          modelCalled,
          // What was asked (times as ISO strings) and the bounds the service resolved it to after snapping.
          range: range === undefined ? null : { requested: { ...range, snap: range.snap ?? 'turn' }, resolved },
          ...(stages !== null ? { stages } : {}),
        };
        printResult(ctx.io, flags.json === true, report, () => {
          const verb = report.dryRun ? 'would archive' : 'archived';
          const stageLines = (stages ?? []).map(
            (st) =>
              `  ${st.name}: ${st.tokensBefore} → ${st.tokensAfter} tokens, ${st.eventsBefore} → ${st.eventsAfter} events\n`,
          );
          const rangeLine =
            range === undefined
              ? ''
              : `  range ${describeRange(flags, range)} → ${
                  resolved !== null
                    ? `${resolved.fromEventId} … ${resolved.toEventId}`
                    : outcome === 'empty-range'
                      ? 'no active event in it'
                      : 'nothing compacted'
                }\n`;
          return (
            `${sessionId} with ${name}: ${outcome}\n` +
            rangeLine +
            `  active window ${report.before.events} → ${report.after.events} events, ${report.before.tokens} → ${report.after.tokens} tokens; ${verb} ${report.archived} event(s)\n` +
            stageLines.join('')
          );
        });
      },
    );
  });
}
