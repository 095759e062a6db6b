import { IllegalStateError, InvalidArgumentError } from '../../errors.js';
import type { ChatClient } from '../../summarization/ChatClient.js';
import { cacheAwareCompaction, type CacheAwareCompactionOptions } from '../cacheAwareCompaction.js';
import {
  AdditiveSummarizationCompactionStrategy,
  type AdditiveSummarizationCompactionStrategyOptions,
} from '../strategies/AdditiveSummarizationCompactionStrategy.js';
import {
  PressureBandCompactionStrategy,
  type PressureBandCompactionStrategyOptions,
} from '../strategies/PressureBandCompactionStrategy.js';
import {
  RecursiveSummarizationCompactionStrategy,
  type RecursiveSummarizationCompactionStrategyOptions,
} from '../strategies/RecursiveSummarizationCompactionStrategy.js';
import {
  SlidingWindowCompactionStrategy,
  type SlidingWindowCompactionStrategyOptions,
} from '../strategies/SlidingWindowCompactionStrategy.js';
import {
  TokenCountCompactionStrategy,
  type TokenCountCompactionStrategyOptions,
} from '../strategies/TokenCountCompactionStrategy.js';
import { ContextWindowTrigger } from '../triggers/ContextWindowTrigger.js';
import type { CompactionProfile, ProfileContext, ProfileSettings } from './CompactionProfile.js';

/** Share of the window the token-budget profile keeps by default. */
const DEFAULT_KEPT_RATIO = 0.5;

function contextWindowTrigger(context: ProfileContext, settings: ProfileSettings): ContextWindowTrigger {
  return new ContextWindowTrigger({
    ...settings.trigger,
    contextWindowTokens: context.contextWindowTokens,
    ...(context.tokenCountEstimator !== undefined ? { tokenCountEstimator: context.tokenCountEstimator } : {}),
  });
}

function common(context: ProfileContext) {
  return {
    ...(context.tokenCountEstimator !== undefined ? { tokenCountEstimator: context.tokenCountEstimator } : {}),
    ...(context.logger !== undefined ? { logger: context.logger } : {}),
  };
}

function chatClientOf(context: ProfileContext, profile: string): ChatClient {
  if (context.chatClient === undefined) {
    throw new IllegalStateError(`profile '${profile}' summarises: it needs a chat client (configure a summarizer)`);
  }
  return context.chatClient;
}

const SUMMARY_OPTIONS = ['systemPrompt', 'shadowPrompt', 'failureMode', 'summarizeFrom'] as const;

/** The profiles every registry starts with. */
export const BUILT_IN_PROFILES: readonly CompactionProfile[] = Object.freeze([
  {
    name: 'sliding-window',
    description: 'Keep the last maxEvents events (default 20) once the window reaches the threshold; no model call.',
    needsChatClient: false,
    optionNames: ['maxEvents', 'cutWithinTurn'],
    create(context, settings) {
      return {
        compactionTrigger: contextWindowTrigger(context, settings),
        compactionStrategy: new SlidingWindowCompactionStrategy({
          ...common(context),
          ...(settings.options as SlidingWindowCompactionStrategyOptions),
        }),
      };
    },
  },
  {
    name: 'token-budget',
    description: 'Keep the newest events that fit maxTokens (default half the window); no model call.',
    needsChatClient: false,
    optionNames: ['maxTokens', 'cutWithinTurn'],
    create(context, settings) {
      return {
        compactionTrigger: contextWindowTrigger(context, settings),
        compactionStrategy: new TokenCountCompactionStrategy({
          maxTokens: Math.max(1, Math.floor(context.contextWindowTokens * DEFAULT_KEPT_RATIO)),
          ...common(context),
          ...(settings.options as TokenCountCompactionStrategyOptions),
        }),
      };
    },
  },
  {
    name: 'recursive',
    description: 'Summarise everything but the last maxEventsToKeep events into one rolling summary.',
    needsChatClient: true,
    optionNames: ['maxEventsToKeep', 'overlapSize', 'maxSummaryTokens', 'updatePrompt', 'cutWithinTurn', ...SUMMARY_OPTIONS],
    create(context, settings) {
      return {
        compactionTrigger: contextWindowTrigger(context, settings),
        compactionStrategy: new RecursiveSummarizationCompactionStrategy({
          ...common(context),
          ...(settings.options as Partial<RecursiveSummarizationCompactionStrategyOptions>),
          chatClient: chatClientOf(context, 'recursive'),
        }),
      };
    },
  },
  {
    name: 'additive',
    description:
      'Append a checkpoint summary per compaction (levels by chunk size); merge the oldest checkpoints when they exceed maxSummaryTokens.',
    needsChatClient: true,
    optionNames: [
      'keepTurns',
      'maxKeptTokens',
      'maxSummaryTokens',
      'maxChunkSummaryTokens',
      'consolidationPrompt',
      'compressionLevels',
      'merge',
      ...SUMMARY_OPTIONS,
    ],
    create(context, settings) {
      return {
        compactionTrigger: contextWindowTrigger(context, settings),
        compactionStrategy: new AdditiveSummarizationCompactionStrategy({
          maxSummaryTokens: Math.max(1, Math.floor(context.contextWindowTokens * 0.15)),
          ...common(context),
          ...(settings.options as Partial<AdditiveSummarizationCompactionStrategyOptions>),
          chatClient: chatClientOf(context, 'additive'),
        }),
      };
    },
  },
  {
    name: 'cache-aware',
    description:
      'Compact rarely, preferably when the provider’s prompt cache has expired; appended summaries with a summariser; with maskToolResults, consumed tool results masked in the same step.',
    needsChatClient: false,
    optionNames: ['keptRatio', 'summaryRatio', 'coldRatio', 'cacheTtlMs', 'maskToolResults'],
    create(context, settings) {
      const setup = cacheAwareCompaction({
        ...common(context),
        ...(settings.options as Partial<CacheAwareCompactionOptions>),
        budgetTokens: context.contextWindowTokens,
        ...(context.chatClient !== undefined ? { chatClient: context.chatClient } : {}),
      });
      return { ...setup };
    },
  },
  {
    name: 'pressure-bands',
    description:
      'Graduated by context pressure: mask tool output at 80 %, strip reasoning and arguments at 85 %, summarise at 90 % (with a summariser), truncate at 99 %.',
    needsChatClient: false,
    optionNames: ['thresholds', 'emergencyTargetRatio', 'maxEventsToKeep', 'overlapSize', 'minSavedTokens', 'cacheTtlMs'],
    create(context, settings) {
      const { maxEventsToKeep, overlapSize, ...options } = (settings.options ?? {}) as Partial<
        PressureBandCompactionStrategyOptions & RecursiveSummarizationCompactionStrategyOptions
      >;
      const { thresholdRatio, ...window } = settings.trigger ?? {};
      if (thresholdRatio !== undefined) {
        throw new InvalidArgumentError(
          "profile 'pressure-bands' fires at its first band: set options.thresholds.mask instead of trigger.thresholdRatio",
        );
      }
      const strategy = new PressureBandCompactionStrategy({
        ...window,
        ...options,
        contextWindowTokens: context.contextWindowTokens,
        ...(context.tokenCountEstimator !== undefined ? { tokenCountEstimator: context.tokenCountEstimator } : {}),
        ...(context.chatClient !== undefined
          ? {
              summarizer: new RecursiveSummarizationCompactionStrategy({
                ...common(context),
                chatClient: context.chatClient,
                ...(maxEventsToKeep !== undefined ? { maxEventsToKeep } : {}),
                ...(overlapSize !== undefined ? { overlapSize } : {}),
              }),
            }
          : {}),
      });
      return { compactionTrigger: strategy.trigger, compactionStrategy: strategy };
    },
  },
]);
