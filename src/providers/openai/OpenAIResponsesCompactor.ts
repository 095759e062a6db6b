import type OpenAI from 'openai';
import { InvalidArgumentError, requireText } from '../../errors.js';
import {
  OPENAI_NATIVE_COMPACTION,
  type NativeCompactionInput,
  type NativeCompactionOutput,
  type NativeCompactor,
} from '../../compaction/nativeCompaction.js';
import { toResponsesInput } from './responsesInput.js';

/** The part of the `openai` SDK client a compaction goes through. */
export type OpenAIResponsesCompactionClient = Pick<OpenAI, 'responses'>;

export interface OpenAIResponsesCompactorOptions {
  /** The model that compacts (a Responses API model, e.g. the conversation's own). */
  model: string;
  /** Other `/responses/compact` parameters, sent as they are (`prompt_cache_key`, `service_tier`...). */
  params?: Record<string, unknown>;
}

/**
 * OpenAI's compaction (`POST /v1/responses/compact`, `client.responses.compact`): the input items are
 * compacted into "all user messages, followed by a single compaction item" whose `encrypted_content` only
 * OpenAI can read. That output, exactly as received, is the payload stored; it has no readable text, so the
 * summary's text comes from the library (see `PortableSummary`). An answer without a `compaction` item is a
 * failure: the strategy falls back to the library's summariser.
 */
export class OpenAIResponsesCompactor implements NativeCompactor {
  readonly provider = OPENAI_NATIVE_COMPACTION;
  readonly model: string;
  private readonly params: Record<string, unknown>;

  constructor(
    private readonly client: OpenAIResponsesCompactionClient,
    options: OpenAIResponsesCompactorOptions,
  ) {
    if (client === null || client === undefined) throw new InvalidArgumentError('client must not be null');
    if (typeof client.responses?.compact !== 'function') {
      throw new InvalidArgumentError('client must have responses.compact (an openai SDK client, version 6 or later)');
    }
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    this.model = requireText(options.model, 'model');
    this.params = { ...(options.params ?? {}) };
  }

  async compact(input: NativeCompactionInput): Promise<NativeCompactionOutput> {
    // A prior OpenAI compaction of the range goes back verbatim; the API compacts it with the rest.
    const compacted = await this.client.responses.compact({
      ...this.params,
      model: this.model,
      input: toResponsesInput(input.events),
    });
    const output = (compacted as { output?: unknown }).output;
    if (!Array.isArray(output) || !output.some((item: { type?: unknown }) => item?.type === 'compaction')) {
      throw new Error('/responses/compact returned no compaction item');
    }
    const usage = compacted.usage;
    return {
      payload: output,
      text: null,
      usage:
        usage === undefined || usage === null
          ? null
          : {
              promptTokens: usage.input_tokens ?? 0,
              completionTokens: usage.output_tokens ?? 0,
              totalTokens: usage.total_tokens ?? (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0),
              cachedPromptTokens: usage.input_tokens_details?.cached_tokens ?? 0,
            },
      model: this.model,
    };
  }
}
