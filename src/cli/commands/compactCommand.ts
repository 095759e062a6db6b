import { Option, type Command } from 'commander';
import { createDefaultContenderRegistry } from '../../bench/registry/defaultContenders.js';
import { createSummarizer } from '../../bench/replay/createSummarizer.js';
import { InvalidArgumentError } from '../../errors.js';
import { DefaultSessionService } from '../../service/DefaultSessionService.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import { EventFilter } from '../../filter/EventFilter.js';
import type { AdminContext, UrlFlags } from '../AdminContext.js';
import { printResult } from '../CliIo.js';
import { withUrlOptions } from './urlOptions.js';

interface CompactFlags extends UrlFlags {
  strategy: string;
  budget: string;
  dryRun?: boolean;
  force?: boolean;
  callModel?: boolean;
  model?: string;
  baseUrl?: string;
  set?: string[];
}

/** `--set key=value` pairs as strategy options; numbers and booleans are parsed. */
function strategyOptions(pairs: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new InvalidArgumentError(`--set expects key=value (got '${pair}')`);
    const raw = pair.slice(eq + 1);
    out[pair.slice(0, eq)] =
      raw === 'true' ? true : raw === 'false' ? false : raw !== '' && !Number.isNaN(Number(raw)) ? Number(raw) : raw;
  }
  return out;
}

export function registerCompactCommand(program: Command, ctx: AdminContext): void {
  withUrlOptions(
    program
      .command('compact')
      .description('Compact one session with a named strategy (the names `bench --list` shows), or preview it with --dry-run.')
      .argument('<sessionId>')
      .requiredOption(
        '--strategy <name>',
        'sliding-window, turn-window, token-count, recursive-summarization, additive-summarization, observation-masking, …',
      )
      .option('--budget <tokens>', 'context budget the strategy and its trigger are sized for', '8000')
      .option('--set <key=value...>', 'strategy options, e.g. --set maxEvents=30')
      .option('--force', 'compact even when the strategy’s trigger would not fire')
      .option('--dry-run', 'show what would be archived and kept; write nothing')
      .option('--call-model', 'with --dry-run: let summarising strategies call the summariser')
      .option(
        '--model <name>',
        'summarise with this model at an OpenAI-compatible endpoint (else the offline extractive summariser)',
      )
      .addOption(new Option('--base-url <url>', 'endpoint for --model (default OPENAI_BASE_URL)')),
  ).action(async (sessionId: string, flags: CompactFlags) => {
    const budget = Number(flags.budget);
    if (!Number.isInteger(budget) || budget <= 0) throw new InvalidArgumentError('--budget must be a positive integer');
    const estimator = defaultTokenCountEstimator();
    const registry = await createDefaultContenderRegistry();
    const contender = registry.get(flags.strategy);
    if (contender.kind !== 'strategy') throw new InvalidArgumentError(`'${flags.strategy}' is a peer library, not a strategy`);
    const summarizer = createSummarizer(
      {
        ...(flags.model !== undefined ? { model: flags.model } : {}),
        ...(flags.baseUrl !== undefined ? { baseURL: flags.baseUrl } : {}),
      },
      estimator,
      ctx.logger,
    );
    const configured = contender.create(
      { budgetTokens: budget, estimator, chatClient: summarizer.client, logger: ctx.logger },
      strategyOptions(flags.set ?? []),
    );
    const trigger = flags.force === true ? () => true : configured.trigger;
    await ctx.withRepository(
      flags.url,
      { ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}) },
      async (repository, where) => {
        const service = new DefaultSessionService(repository, { logger: ctx.logger, tokenCountEstimator: estimator });
        type Outcome = 'dry-run' | 'not-triggered' | 'nothing-to-archive' | 'committed' | 'cas-lost' | 'rebased';
        let outcome: Outcome;
        let triggered: boolean;
        let before: { events: number; tokens: number };
        let after: { events: number; tokens: number };
        let archivedIds: string[];
        let modelCalled: boolean | null = null;
        if (flags.dryRun === true) {
          const preview = await service.previewCompaction(sessionId, trigger, configured.strategy, {
            callModel: flags.callModel === true,
          });
          outcome = preview.triggered ? 'dry-run' : 'not-triggered';
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
          service.events.on('compactionCompleted', (e) => (rebased = e.rebased));
          const result = await service.compact(sessionId, trigger, configured.strategy);
          const windowAfter = await repository.findEvents(sessionId, EventFilter.active());
          after = { events: windowAfter.length, tokens: estimateEventsTokens(windowAfter, estimator) };
          triggered = skipReason !== 'trigger-not-fired';
          outcome =
            skipReason === 'trigger-not-fired'
              ? 'not-triggered'
              : skipReason === 'cas-conflict'
                ? 'cas-lost'
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
          strategy: flags.strategy,
          summarizer: contender.needsChatClient === true ? summarizer.description : null,
          dryRun: flags.dryRun === true,
          outcome,
          triggered,
          before,
          after,
          archived: archivedIds.length,
          archivedIds,
          modelCalled,
        };
        printResult(ctx.io, flags.json === true, report, () => {
          const verb = report.dryRun ? 'would archive' : 'archived';
          return (
            `${sessionId} with ${flags.strategy}: ${outcome}\n` +
            `  active window ${report.before.events} → ${report.after.events} events, ${report.before.tokens} → ${report.after.tokens} tokens; ${verb} ${report.archived} event(s)\n`
          );
        });
      },
    );
  });
}
