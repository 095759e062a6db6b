/**
 * The stable history end as AnthropicChatProvider computed it before it rendered the prompt once: the history
 * before the recall block rendered a second time, and the last block where that rendering and the prompt
 * still agree. Kept as the oracle of the property test that the one-rendering position is the same, and as
 * the "before" path of benchmarks/anthropic-prompt.ts. The two can differ only where a block rendered from the
 * recall block or later equals, field for field, the block the history alone renders at that place (a recorded
 * tool result identical to the placeholder for a missing one): this one compares contents, the other origins.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { SessionEvent } from 'session-compaction';
import {
  DEFAULT_MISSING_TOOL_RESULT,
  anthropicPrompt,
  type AnthropicPrompt,
  type ToAnthropicOptions,
} from '../../src/providers/anthropic/AnthropicMessages.js';
import { METADATA_RECALL_BLOCK } from '../../src/chat/recallSupport.js';

export interface BlockPosition {
  message: number;
  block: number;
}

const blocksOf = (content: MessageParam['content']): ContentBlockParam[] =>
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
  // A recall block that is a user message makes the calls before it ones the user moved on from (a system one
  // does not): render the history before it the same way, then take the stand-in user turn off again.
  const marker: ContentBlockParam = { type: 'text', text: '\u0000recall' };
  // Calls before the block that the prompt answers with a placeholder were moved on from by what follows it.
  const missing = options.missingToolResult ?? DEFAULT_MISSING_TOOL_RESULT;
  const placeholders = new Set(
    prompt.messages.flatMap((m) =>
      blocksOf(m.content).flatMap((b) =>
        b.type === 'tool_result' && b.is_error === true && b.content === missing ? [b.tool_use_id] : [],
      ),
    ),
  );
  const calls = history.slice(0, recallAt).flatMap((e) => (e.message.type === 'assistant' ? (e.message.toolCalls ?? []) : []));
  const movedOn = history[recallAt]!.messageType === 'user' || calls.some((c) => placeholders.has(c.id));
  const stand = movedOn ? [{ role: 'user' as const, content: [marker] }] : [];
  const before = anthropicPrompt(history.slice(0, recallAt), stand, undefined, options).messages;
  if (stand.length === 0) return commonEnd(before, prompt.messages);
  const last = before[before.length - 1]!;
  const rest = blocksOf(last.content).filter((b) => !isDeepStrictEqual(b, marker));
  const trimmed = rest.length === 0 ? before.slice(0, -1) : [...before.slice(0, -1), { ...last, content: rest } as MessageParam];
  return commonEnd(trimmed, prompt.messages);
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
