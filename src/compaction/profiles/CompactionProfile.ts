import type { Logger } from '../../logging.js';
import type { ChatClient } from '../../summarization/ChatClient.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import type { CompactionStrategy } from '../CompactionStrategy.js';
import type { CompactionTrigger } from '../CompactionTrigger.js';

/** What a profile is built for: the model's window and the services its trigger and strategy need. */
export interface ProfileContext {
  /** The context window the trigger and the strategy are sized for. */
  contextWindowTokens: number;
  /** The summariser; profiles that summarise refuse to build without one. */
  chatClient?: ChatClient;
  tokenCountEstimator?: TokenCountEstimator;
  logger?: Logger;
}

/** The trigger settings a profile reads (ContextWindowTrigger's, for the profiles that use it). */
export interface ProfileTriggerSettings {
  /** Share of the usable window at which to compact, in (0, 1]. */
  thresholdRatio?: number;
  minTokens?: number;
  reserveTokens?: number;
  systemPromptTokens?: number;
  toolSchemaTokens?: number;
}

/** How one use of a profile is tuned: trigger settings and strategy options (JSON values, as in a configuration file). */
export interface ProfileSettings {
  trigger?: ProfileTriggerSettings;
  options?: Readonly<Record<string, unknown>>;
}

/** A trigger and a strategy ready to use: spread into SessionMemory's options, or pass to `service.compact`. */
export interface CompactionSetup {
  /** The profile it was built from. */
  profile: string;
  compactionTrigger: CompactionTrigger;
  compactionStrategy: CompactionStrategy;
  /** The trigger must also run before the model call (cache-aware compaction). */
  compactBeforeCall?: boolean;
}

/**
 * A named compaction recipe: a trigger, a strategy and their options. Built-ins are
 * registered by `CompactionProfileRegistry.withBuiltIns()`; applications register their own.
 */
export interface CompactionProfile {
  readonly name: string;
  readonly description: string;
  /** True when the profile summarises and so needs `context.chatClient`. */
  readonly needsChatClient: boolean;
  /** The strategy options it accepts (checked before `create`, so a typo is an error, not a silent default). */
  readonly optionNames: readonly string[];
  create(context: ProfileContext, settings: ProfileSettings): Omit<CompactionSetup, 'profile'>;
}
