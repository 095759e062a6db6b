import {
  CompactionResult,
  CompactionPipeline,
  PressureBandCompactionStrategy,
  ContentPolicyCompactionStrategy,
  ObservationMaskingCompactionStrategy,
  AdditiveSummarizationCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  SlidingWindowCompactionStrategy,
  TokenCountCompactionStrategy,
  TurnWindowCompactionStrategy,
  TokenCountTrigger,
  cacheAwareCompaction,
  type ChatClient,
  InvalidArgumentError,
} from 'session-compaction';
import {
  CUT_WITHIN_TURN_MODES,
  DEFAULT_PROMPT_CACHE_TTL_MS,
  SUMMARY_FAILURE_MODES,
  type RewriteDeferralOptions,
} from 'session-compaction/spi';
import { registerRecallVariants } from './recallVariants.js';
import {
  ContenderRegistry,
  type ConfiguredStrategy,
  type ContenderContext,
  type ContenderOptions,
  type OptionSpec,
} from './ContenderRegistry.js';

/** Share of the budget that a token-budget cut keeps, so that compactions come in a sawtooth, not every call. */
export const DEFAULT_TARGET_RATIO = 0.6;

/*
 * The options each contender reads: the benchmark's own (targetRatio, summaryRatio, coldRatio, cacheTtlMs) and
 * the strategy constructor's options that a JSON config or `--set` can give (no functions, no estimator, no
 * chat client: the run supplies those).
 */
const RATIO = { targetRatio: 'number' } as const satisfies OptionSpec;
const TOKEN_COUNT = { maxTokens: 'number', cutWithinTurn: CUT_WITHIN_TURN_MODES } as const satisfies OptionSpec;
const SUMMARIZING = {
  systemPrompt: 'string',
  shadowPrompt: 'string',
  failureMode: SUMMARY_FAILURE_MODES,
  summarizeFrom: ['originals', 'window'],
} as const satisfies OptionSpec;
const RECURSIVE = {
  ...SUMMARIZING,
  maxEventsToKeep: 'number',
  overlapSize: 'number',
  maxSummaryTokens: 'number',
  updatePrompt: 'string',
  cutWithinTurn: CUT_WITHIN_TURN_MODES,
} as const satisfies OptionSpec;
const ADDITIVE = {
  ...SUMMARIZING,
  keepTurns: 'number',
  maxKeptTokens: 'number',
  maxSummaryTokens: 'number',
  maxChunkSummaryTokens: 'number',
  consolidationPrompt: 'string',
  compressionLevels: 'array',
  merge: ['oldest-first', 'all'],
} as const satisfies OptionSpec;
const CACHE_AWARE = {
  ...RATIO,
  coldRatio: 'number',
  cacheTtlMs: 'number',
  maskToolResults: 'boolean',
} as const satisfies OptionSpec;
/** Cache-aware masking: `minSavedRatio` (share of the budget) becomes the strategy's `minSavedTokens`. */
const DEFERRAL = { minSavedRatio: 'number', minSavedTokens: 'number', cacheTtlMs: 'number' } as const satisfies OptionSpec;

/** Every one of our contenders compacts when the active window reaches the budget. */
function budgetTrigger(context: ContenderContext): TokenCountTrigger {
  return new TokenCountTrigger({ threshold: context.budgetTokens, tokenCountEstimator: context.estimator });
}

function ratioOption(options: ContenderOptions, key: string, fallback: number): number {
  const ratio = options[key] ?? fallback;
  if (typeof ratio !== 'number' || !(ratio > 0 && ratio <= 1)) throw new InvalidArgumentError(`${key} must be in (0, 1]`);
  return ratio;
}

function targetTokens(context: ContenderContext, options: ContenderOptions, fallback = DEFAULT_TARGET_RATIO): number {
  return Math.max(1, Math.floor(context.budgetTokens * ratioOption(options, 'targetRatio', fallback)));
}

/** Config options minus the benchmark's own keys, passed to the strategy constructor as they are. */
function passThrough(options: ContenderOptions): Record<string, unknown> {
  const {
    targetRatio: _targetRatio,
    coldRatio: _coldRatio,
    cacheTtlMs: _cacheTtlMs,
    summaryRatio: _summaryRatio,
    minSavedRatio: _minSavedRatio,
    minSavedTokens: _minSavedTokens,
    maskToolResults: _maskToolResults,
    ...rest
  } = options;
  return rest;
}

/**
 * The in-place rewrite deferral of a cache-aware masking contender (none without `minSavedRatio` or
 * `minSavedTokens`), clocked by the replay so that a pause longer than `cacheTtlMs` (default the presets'
 * 5 minutes) counts as a cold cache.
 */
function deferral(context: ContenderContext, options: ContenderOptions): RewriteDeferralOptions {
  const tokens =
    options.minSavedTokens ??
    (options.minSavedRatio === undefined
      ? undefined
      : Math.max(1, Math.floor(context.budgetTokens * ratioOption(options, 'minSavedRatio', 1))));
  if (tokens === undefined) return {};
  return {
    minSavedTokens: tokens as number,
    ...(options.cacheTtlMs !== undefined ? { cacheTtlMs: options.cacheTtlMs as number } : {}),
    ...(context.now !== undefined ? { now: context.now } : {}),
  };
}

function requireChatClient(context: ContenderContext, name: string) {
  if (context.chatClient === undefined) throw new InvalidArgumentError(`${name} needs a summariser (chatClient)`);
  return context.chatClient;
}

/**
 * The cache-aware profile at this budget, clocked by the replay. Benchmark options `targetRatio` (the kept
 * share), `summaryRatio`, `coldRatio` and `cacheTtlMs` set the profile's own; any other option is passed to
 * the strategy's constructor on top of the profile's settings.
 */
function cacheAwareProfile(
  context: ContenderContext,
  options: ContenderOptions,
  chatClient: ChatClient | undefined,
): ConfiguredStrategy {
  const ttl = options.cacheTtlMs ?? DEFAULT_PROMPT_CACHE_TTL_MS;
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl <= 0)
    throw new InvalidArgumentError('cacheTtlMs must be a positive integer');
  const given = (key: string) => (options[key] === undefined ? undefined : ratioOption(options, key, 1));
  const keptRatio = given('targetRatio');
  const summaryRatio = given('summaryRatio');
  const coldRatio = given('coldRatio');
  const profile = cacheAwareCompaction({
    budgetTokens: context.budgetTokens,
    ...(chatClient !== undefined ? { chatClient } : {}),
    ...(keptRatio !== undefined ? { keptRatio } : {}),
    ...(summaryRatio !== undefined ? { summaryRatio } : {}),
    ...(coldRatio !== undefined ? { coldRatio } : {}),
    cacheTtlMs: ttl,
    ...(options.maskToolResults === true ? { maskToolResults: true } : {}),
    tokenCountEstimator: context.estimator,
    logger: context.logger,
    ...(context.now !== undefined ? { now: context.now } : {}),
  });
  const extra = passThrough(options);
  if (Object.keys(extra).length === 0) return { trigger: profile.compactionTrigger, strategy: profile.compactionStrategy };
  if (options.maskToolResults === true) {
    throw new InvalidArgumentError(`maskToolResults takes no strategy options (got ${Object.keys(extra).join(', ')})`);
  }
  const built = profile.compactionStrategy;
  const strategy =
    built instanceof AdditiveSummarizationCompactionStrategy
      ? new AdditiveSummarizationCompactionStrategy({
          chatClient: built.chatClient,
          keepTurns: built.keepTurns,
          ...(built.maxKeptTokens !== undefined ? { maxKeptTokens: built.maxKeptTokens } : {}),
          maxSummaryTokens: built.maxSummaryTokens,
          tokenCountEstimator: context.estimator,
          logger: context.logger,
          ...extra,
        })
      : new TokenCountCompactionStrategy({
          maxTokens: (built as TokenCountCompactionStrategy).maxTokens,
          tokenCountEstimator: context.estimator,
          ...extra,
        });
  return { trigger: profile.compactionTrigger, strategy };
}

/**
 * The registry the CLI uses: every strategy of the library that exists in this build, plus the peers whose
 * libraries are installed (they are development dependencies: an installed package may not have them).
 */
export async function createDefaultContenderRegistry(): Promise<ContenderRegistry> {
  const registry = new ContenderRegistry();
  registry
    .register({
      kind: 'strategy',
      name: 'none',
      options: {},
      description: 'no compaction: the whole history is sent (the ceiling for retention, the floor for savings)',
      create: () => ({
        trigger: { shouldCompact: () => false },
        strategy: { compact: async (r) => CompactionResult.noop(r.events) },
      }),
    })
    .register({
      kind: 'strategy',
      name: 'sliding-window',
      options: { maxEvents: 'number', cutWithinTurn: CUT_WITHIN_TURN_MODES },
      description: 'SlidingWindowCompactionStrategy (maxEvents 20) when the window reaches the budget',
      create: (context, options) => ({
        trigger: budgetTrigger(context),
        strategy: new SlidingWindowCompactionStrategy({
          maxEvents: 20,
          tokenCountEstimator: context.estimator,
          ...passThrough(options),
        }),
      }),
    })
    .register({
      kind: 'strategy',
      name: 'turn-window',
      options: { maxTurns: 'number' },
      description: 'TurnWindowCompactionStrategy (maxTurns 10) when the window reaches the budget',
      create: (context, options) => ({
        trigger: budgetTrigger(context),
        strategy: new TurnWindowCompactionStrategy({
          maxTurns: 10,
          tokenCountEstimator: context.estimator,
          ...passThrough(options),
        }),
      }),
    })
    .register({
      kind: 'strategy',
      name: 'token-count',
      options: { ...RATIO, ...TOKEN_COUNT },
      description: `TokenCountCompactionStrategy keeping ${DEFAULT_TARGET_RATIO} x budget when the window reaches the budget`,
      create: (context, options) => ({
        trigger: budgetTrigger(context),
        strategy: new TokenCountCompactionStrategy({
          maxTokens: targetTokens(context, options),
          tokenCountEstimator: context.estimator,
          ...passThrough(options),
        }),
      }),
    })
    .register({
      kind: 'strategy',
      name: 'recursive-summarization',
      options: RECURSIVE,
      description: 'RecursiveSummarizationCompactionStrategy (maxEventsToKeep 10, overlap 2) when the window reaches the budget',
      needsChatClient: true,
      create: (context, options) => ({
        trigger: budgetTrigger(context),
        strategy: new RecursiveSummarizationCompactionStrategy({
          chatClient: requireChatClient(context, 'recursive-summarization'),
          tokenCountEstimator: context.estimator,
          logger: context.logger,
          ...passThrough(options),
        }),
      }),
    })
    .register({
      kind: 'strategy',
      name: 'additive-summarization',
      options: { ...ADDITIVE, ...RATIO, summaryRatio: 'number' },
      description:
        'AdditiveSummarizationCompactionStrategy (keepTurns 4, summaries capped at 0.25 x budget) when the window reaches the budget',
      needsChatClient: true,
      create: (context, options) => ({
        trigger: budgetTrigger(context),
        strategy: new AdditiveSummarizationCompactionStrategy({
          chatClient: requireChatClient(context, 'additive-summarization'),
          maxSummaryTokens: Math.max(1, Math.floor(context.budgetTokens * ratioOption(options, 'summaryRatio', 0.25))),
          maxKeptTokens: targetTokens(context, options),
          tokenCountEstimator: context.estimator,
          logger: context.logger,
          ...passThrough(options),
        }),
      }),
    });

  registry
    .register({
      kind: 'strategy',
      name: 'token-count-pair-safe',
      options: { ...RATIO, ...TOKEN_COUNT },
      description: "token-count with cutWithinTurn 'tool-pair-safe': cuts inside a long agent turn at a step start",
      create: (context, options) => ({
        trigger: budgetTrigger(context),
        strategy: new TokenCountCompactionStrategy({
          maxTokens: targetTokens(context, options),
          tokenCountEstimator: context.estimator,
          cutWithinTurn: 'tool-pair-safe',
          ...passThrough(options),
        }),
      }),
    })
    .register({
      kind: 'strategy',
      name: 'token-count-java',
      options: { ...RATIO, ...TOKEN_COUNT },
      description: "token-count with cutWithinTurn 'never' (the Java cut): archives a whole long agent turn",
      create: (context, options) => ({
        trigger: budgetTrigger(context),
        strategy: new TokenCountCompactionStrategy({
          maxTokens: targetTokens(context, options),
          tokenCountEstimator: context.estimator,
          cutWithinTurn: 'never',
          ...passThrough(options),
        }),
      }),
    })
    .register({
      kind: 'strategy',
      name: 'observation-masking',
      options: { maxChars: 'number', consumedBy: ['assistant', 'assistant-text'], ...DEFERRAL },
      description:
        'ObservationMaskingCompactionStrategy: consumed tool results cut to a 300-character excerpt (with minSavedRatio: in steps of that share of the budget, or when the cache is cold)',
      create: (context, options) => {
        const { cacheTtlMs: _ttl, ...rest } = passThrough(options);
        return {
          trigger: budgetTrigger(context),
          strategy: new ObservationMaskingCompactionStrategy({
            tokenCountEstimator: context.estimator,
            ...rest,
            ...deferral(context, options),
          }),
        };
      },
    })
    .register({
      kind: 'strategy',
      name: 'content-policy',
      options: { reasoning: ['keep', 'strip'], toolCalls: 'object', perTool: 'object', keepLast: 'object' },
      description: 'ContentPolicyCompactionStrategy (defaults: reasoning and tool outputs stripped, arguments kept)',
      create: (context, options) => ({
        trigger: budgetTrigger(context),
        strategy: new ContentPolicyCompactionStrategy({ tokenCountEstimator: context.estimator, ...passThrough(options) }),
      }),
    })
    .register({
      kind: 'strategy',
      name: 'pipeline',
      options: { ...RATIO, maxTokens: 'number', ...DEFERRAL },
      description:
        'CompactionPipeline to 0.6 x budget: mask → recursive summary → token budget (default agent-safe cut) as the last resort',
      needsChatClient: true,
      create: (context, options) => {
        const maxTokens = targetTokens(context, options);
        const { cacheTtlMs: _ttl, ...rest } = passThrough(options);
        return {
          trigger: budgetTrigger(context),
          strategy: new CompactionPipeline({
            stages: [
              new ObservationMaskingCompactionStrategy({ tokenCountEstimator: context.estimator }),
              new RecursiveSummarizationCompactionStrategy({
                chatClient: requireChatClient(context, 'pipeline'),
                tokenCountEstimator: context.estimator,
                logger: context.logger,
              }),
              new TokenCountCompactionStrategy({
                maxTokens,
                tokenCountEstimator: context.estimator,
              }),
            ],
            maxTokens,
            tokenCountEstimator: context.estimator,
            ...rest,
            ...deferral(context, options),
          }),
        };
      },
    })
    .register({
      kind: 'strategy',
      name: 'masking-pipeline',
      options: { ...RATIO, maxChars: 'number', ...DEFERRAL },
      description:
        'CompactionPipeline to 0.6 x budget when the window reaches the budget: mask consumed tool results, then the token budget cut if that is not enough (no model call)',
      create: (context, options) => {
        const maxTokens = targetTokens(context, options);
        const maxChars = options.maxChars as number | undefined;
        return {
          trigger: budgetTrigger(context),
          strategy: new CompactionPipeline({
            stages: [
              new ObservationMaskingCompactionStrategy({
                tokenCountEstimator: context.estimator,
                ...(maxChars !== undefined ? { maxChars } : {}),
              }),
              new TokenCountCompactionStrategy({ maxTokens, tokenCountEstimator: context.estimator }),
            ],
            maxTokens,
            tokenCountEstimator: context.estimator,
            ...deferral(context, options),
          }),
        };
      },
    });
  registry.register({
    kind: 'strategy',
    name: 'pressure-bands',
    options: {
      minTokens: 'number',
      reserveTokens: 'number',
      systemPromptTokens: 'number',
      toolSchemaTokens: 'number',
      emergencyTargetRatio: 'number',
      thresholds: 'object',
      ...DEFERRAL,
    },
    description:
      'PressureBandCompactionStrategy with the budget as the window: mask at 0.8, strip at 0.85, recursive summary at 0.9, truncate to 0.7 at 0.99',
    needsChatClient: true,
    create: (context, options) => {
      const strategy = new PressureBandCompactionStrategy({
        contextWindowTokens: context.budgetTokens,
        tokenCountEstimator: context.estimator,
        summarizer: new RecursiveSummarizationCompactionStrategy({
          chatClient: requireChatClient(context, 'pressure-bands'),
          tokenCountEstimator: context.estimator,
          logger: context.logger,
        }),
        ...(() => {
          const { cacheTtlMs: _ttl, ...rest } = passThrough(options);
          return rest;
        })(),
        ...deferral(context, options),
      });
      return { trigger: strategy.trigger, strategy };
    },
  });
  registry
    .register({
      kind: 'strategy',
      name: 'cache-aware',
      options: { ...CACHE_AWARE, summaryRatio: 'number', ...ADDITIVE },
      description:
        'cacheAwareCompaction profile: CacheAwareTrigger (budget; 0.85 x budget once the prompt cache is cold), additive summaries up to 0.35 x budget, whole turns kept up to 0.5 x budget',
      needsChatClient: true,
      create: (context, options) => cacheAwareProfile(context, options, requireChatClient(context, 'cache-aware')),
    })
    .register({
      kind: 'strategy',
      name: 'token-count-cache-aware',
      options: { ...CACHE_AWARE, ...TOKEN_COUNT },
      description:
        'cacheAwareCompaction profile without a summariser: CacheAwareTrigger (budget; 0.8 x budget once cold), token-count keeping 0.8 x budget',
      create: (context, options) => cacheAwareProfile(context, options, undefined),
    });
  // A new strategy takes part in every benchmark with one more `registry.register({ kind: 'strategy', ... })`
  // built on budgetTrigger(context), so that it is compared at the same budget as the others.

  try {
    const { LangChainTrimPeer } = await import('../peers/LangChainTrimPeer.js');
    registry.register({
      kind: 'peer',
      name: 'langchain-trim',
      options: {},
      description: "LangChain.js trimMessages (strategy 'last', startOn 'human', system kept) at the budget, same token counter",
      create: (context) => new LangChainTrimPeer(context),
    });
  } catch (error) {
    registry.markUnavailable(
      'langchain-trim',
      `@langchain/core is not installed (${(error as Error).message.split('\n')[0]})`,
      'npm install @langchain/core',
    );
  }
  try {
    const { AiSdkPrunePeer } = await import('../peers/AiSdkPrunePeer.js');
    registry.register({
      kind: 'peer',
      name: 'ai-sdk-prune',
      options: {},
      description: "Vercel AI SDK pruneMessages (toolCalls 'before-last-2-messages', reasoning 'before-last-message'); no budget",
      notApplicable: (dataset) =>
        dataset.sessions.some((s) => s.events.some((e) => (e.toolCalls?.length ?? 0) > 0)) ? null : 'no tool calls to prune',
      create: (context) => new AiSdkPrunePeer(context),
    });
  } catch (error) {
    registry.markUnavailable(
      'ai-sdk-prune',
      `the 'ai' package is not installed (${(error as Error).message.split('\n')[0]})`,
      'npm install ai',
    );
  }
  // LibreChat's pruning (@librechat/agents) needs Node >= 24 and is not installed (this project targets
  // Node 20): it would register here as a 'peer' once it can run.
  registry.markUnavailable('librechat-prune', '@librechat/agents requires Node >= 24 and is not installed');
  registerRecallVariants(registry);
  return registry;
}
