import type { BaseMessage } from '@langchain/core/messages';
import { detectContextOverflow, type ContextOverflow, type ProviderRefusal } from '../../chat/contextOverflow.js';
import { ContextOverflowError } from '../../chat/ContextOverflowError.js';
import { ContextOverflowRecovery } from '../../chat/ContextOverflowRecovery.js';
import { SessionMetadataWriter } from '../../chat/SessionMetadataWriter.js';
import { EventFilter } from '../../filter/EventFilter.js';
import type { Logger } from '../../logging.js';
import type { SessionService } from '../../service/SessionService.js';
import { formatMessage } from '../../session/formatEvent.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { anthropicRefusal } from '../anthropic/anthropicRefusal.js';
import { openAIRefusal } from '../openai/openAIRefusal.js';
import { fromLangChainMessage } from './LangChainMessages.js';

/** What `recoverFromOverflow` did about a context-overflow refusal. */
export interface HistoryOverflowOutcome {
  overflow: ContextOverflow;
  /** Events the emergency compaction archived (they stay in the log: `getAllMessages`). */
  archived: number;
}

/** LangChain's chat models wrap the provider SDK's error (its `cause`): OpenAI's or Anthropic's. */
function providerRefusal(error: unknown): ProviderRefusal | null {
  return openAIRefusal(error) ?? anthropicRefusal(error);
}

export interface HistoryOverflowRecoveryOptions {
  service: SessionService;
  sessionId: string;
  estimator: TokenCountEstimator;
  logger: Logger;
  contextWindowTokens: number | undefined;
  /** Appends messages the way the history does (addMessages), for an input a failed turn would lose. */
  store: (messages: BaseMessage[]) => Promise<void>;
}

/**
 * Overflow recovery for a LangChain chat history, which never sees the model call: the application (or
 * `withOverflowRecovery`) hands it the refusal, and it calibrates and compacts the stored window so that the
 * same chain, invoked once more, fits. RunnableWithMessageHistory stores a turn's input only with its
 * reply, so an input whose turn fails in the end is stored here: nothing is lost.
 */
export class HistoryOverflowRecovery {
  private readonly recovery: ContextOverflowRecovery;

  constructor(private readonly options: HistoryOverflowRecoveryOptions) {
    this.recovery = new ContextOverflowRecovery({
      service: options.service,
      estimator: options.estimator,
      logger: options.logger,
      metadata: SessionMetadataWriter.of(undefined, options.service, options.logger) ?? null,
      ...(options.contextWindowTokens !== undefined ? { contextWindowTokens: options.contextWindowTokens } : {}),
    });
  }

  overflowOf(error: unknown): ContextOverflow | null {
    return detectContextOverflow(error, providerRefusal);
  }

  async recover(error: unknown, input: readonly BaseMessage[] = []): Promise<HistoryOverflowOutcome | null> {
    const overflow = this.overflowOf(error);
    if (overflow === null) return null;
    const { service, sessionId, estimator } = this.options;
    if ((await service.findById(sessionId)) === null) return { overflow, archived: 0 };
    const window = await service.getEvents(sessionId, EventFilter.active());
    const inputTokens = input.reduce((sum, m) => sum + estimator.estimate(formatMessage(fromLangChainMessage(m).message)), 0);
    const outcome = await this.recovery.recover({
      sessionId,
      overflow,
      estimatedPromptTokens: estimateEventsTokens(window, estimator) + inputTokens,
      outsideWindowTokens: inputTokens,
    });
    return { overflow, archived: outcome.result.archivedEvents.length };
  }

  async run<R>(invoke: () => Promise<R>, input: readonly BaseMessage[]): Promise<R> {
    try {
      return await invoke();
    } catch (error) {
      const recovered = await this.recover(error, input);
      if (recovered === null) throw error;
      if (recovered.archived === 0) {
        await this.storeInput(input);
        throw new ContextOverflowError(this.options.sessionId, recovered.overflow, { attempts: 1, archived: 0, cause: error });
      }
      try {
        return await invoke();
      } catch (second) {
        const again = this.overflowOf(second);
        if (again === null) throw second;
        await this.storeInput(input);
        throw new ContextOverflowError(this.options.sessionId, again, {
          attempts: 2,
          archived: recovered.archived,
          cause: second,
        });
      }
    }
  }

  /** Stores the turn's input unless the window already ends with it. */
  private async storeInput(input: readonly BaseMessage[]): Promise<void> {
    if (input.length === 0) return;
    const { service, sessionId } = this.options;
    const window = await service.getEvents(sessionId, EventFilter.active());
    const texts = (messages: readonly { message: Parameters<typeof formatMessage>[0] }[]) =>
      messages.map((m) => formatMessage(m.message)).join('\n');
    const given = input.map((m) => fromLangChainMessage(m));
    if (window.length >= given.length && texts(window.slice(-given.length)) === texts(given)) return;
    await this.options.store([...input]);
  }
}
