/**
 * The stable history end as AnthropicChatProvider computed it before it rendered the prompt once: the history
 * before the recall block rendered a second time, and the last block where that rendering and the prompt
 * still agree. Kept as the oracle of the property test that the one-rendering position is the same, and as
 * the "before" path of benchmarks/anthropic-prompt.ts. The two can differ only where a block rendered from the
 * recall block or later equals, field for field, the block the history alone renders at that place (a recorded
 * tool result identical to the placeholder for a missing one): this one compares contents, the other origins.
 */
import { isDeepStrictEqual } from 'node:util';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { SessionEvent } from 'session-compaction';
import {
  anthropicPrompt,
  type AnthropicPrompt,
  type ToAnthropicOptions,
} from '../../src/providers/anthropic/AnthropicMessages.js';
import { METADATA_RECALL_BLOCK } from '../../src/chat/recallSupport.js';

export interface BlockPosition {
  message: number;
  block: number;
}

const blocksOf = (content: MessageParam['content']) =>
  typeof content === 'string' ? (content === '' ? [] : [{ type: 'text', text: content }]) : content;

export function referenceStableHistoryEnd(
  history: readonly SessionEvent[],
  prompt: AnthropicPrompt,
  options: ToAnthropicOptions,
): BlockPosition | undefined {
  const recallAt = history.findIndex((e) => e.metadata[METADATA_RECALL_BLOCK] === true);
  if (recallAt < 0) {
    const last = prompt.messages.length - 1;
    return last < 0 ? undefined : { message: last, block: blocksOf(prompt.messages[last]!.content).length - 1 };
  }
  const before = anthropicPrompt(history.slice(0, recallAt), [], undefined, options).messages;
  return commonEnd(before, prompt.messages);
}

function commonEnd(prefix: readonly MessageParam[], messages: readonly MessageParam[]): BlockPosition | undefined {
  let end: BlockPosition | undefined;
  for (let m = 0; m < prefix.length && m < messages.length; m++) {
    if (prefix[m]!.role !== messages[m]!.role) break;
    const a = blocksOf(prefix[m]!.content);
    const b = blocksOf(messages[m]!.content);
    let j = 0;
    while (j < a.length && j < b.length && isDeepStrictEqual(a[j], b[j])) end = { message: m, block: j++ };
    if (j < a.length || j < b.length) break;
  }
  return end;
}
