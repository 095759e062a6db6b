import type {
  CacheControlEphemeral,
  ContentBlockParam,
  MessageParam,
  RedactedThinkingBlockParam,
  TextBlockParam,
  ThinkingBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import type { SessionEvent } from '../../session/SessionEvent.js';
import { METADATA_NATIVE, nativeValue, type NativeRecord } from '../../chat/nativeMessages.js';
import { METADATA_RECALL_BLOCK } from '../../chat/recallSupport.js';
import { ANTHROPIC_FORMAT, type AnthropicPrompt, type RenderedPrompt } from './AnthropicMessages.js';

/** The API refuses a request with more `cache_control` breakpoints than this (tools, system and messages together). */
export const MAX_CACHE_BREAKPOINTS = 4;

/** Where a content block sits in `prompt.messages`. */
interface BlockPosition {
  message: number;
  block: number;
}

/** The request parameters that can hold breakpoints besides the prompt itself. */
interface BreakpointParams {
  tools?: readonly object[] | undefined;
  cache_control?: CacheControlEphemeral | null | undefined;
}

/** Thinking blocks cannot carry `cache_control` (the API caches them only as part of a prefix). */
type CacheableBlock = Exclude<ContentBlockParam, ThinkingBlockParam | RedactedThinkingBlockParam>;

const blocksOf = (content: MessageParam['content']): ContentBlockParam[] =>
  typeof content === 'string' ? (content === '' ? [] : [{ type: 'text', text: content }]) : content;

// A fresh object per breakpoint: the request is the SDK's to serialise, and nothing shares it.
const ephemeral = (): CacheControlEphemeral => ({ type: 'ephemeral' });

function isCacheable(block: ContentBlockParam): block is CacheableBlock {
  if (block.type === 'thinking' || block.type === 'redacted_thinking') return false;
  // The API refuses cache_control on an empty text block.
  return block.type !== 'text' || block.text !== '';
}

/**
 * The last block of the prompt that stays the same on the next turn: with SessionMemory's recall block in
 * the history, the last block rendered before it (the block and everything after it are rebuilt every turn,
 * and a cache write costs 1.25× input); without one, the prompt's last block, which the next request repeats
 * and finds within the API's 20-block lookback. None when nothing precedes the recall block ('after-system').
 * `rendered` is the rendering of `history` (and the request after it).
 */
export function stableHistoryEnd(history: readonly SessionEvent[], rendered: RenderedPrompt): BlockPosition | undefined {
  const { messages } = rendered.prompt;
  const recallAt = history.findIndex((e) => e.metadata[METADATA_RECALL_BLOCK] === true);
  if (recallAt < 0) {
    const last = messages.length - 1;
    return last < 0 ? undefined : { message: last, block: blocksOf(messages[last]!.content).length - 1 };
  }
  // Merging and tool pairing may fold the recall block into the message before it, and put a later tool
  // result ahead of earlier text there (a user turn of tool results does): the end is the block before the
  // first one that comes from the recall block or anything after it, in prompt order.
  let end: BlockPosition | undefined;
  for (const [message, origins] of rendered.origins.entries()) {
    for (const [block, origin] of origins.entries()) {
      if (origin >= recallAt) return end;
      end = { message, block };
    }
  }
  return end;
}

/** Breakpoints already in a request: top-level automatic caching, tools, system blocks, message blocks. */
export function countCacheBreakpoints(prompt: AnthropicPrompt, params: BreakpointParams): number {
  let count = params.cache_control === undefined || params.cache_control === null ? 0 : 1;
  for (const tool of params.tools ?? []) count += marked(tool) ? 1 : 0;
  if (Array.isArray(prompt.system)) count += countIn(prompt.system);
  for (const message of prompt.messages) if (typeof message.content !== 'string') count += countIn(message.content);
  return count;
}

const marked = (value: object): boolean => {
  const control = (value as { cache_control?: unknown }).cache_control;
  return control !== undefined && control !== null;
};

// Blocks nested in a tool result, a search result or a document can carry breakpoints of their own.
function countIn(blocks: readonly unknown[]): number {
  let count = 0;
  for (const block of blocks) {
    if (block === null || typeof block !== 'object') continue;
    if (marked(block)) count++;
    const { content, source } = block as { content?: unknown; source?: { content?: unknown } };
    if (Array.isArray(content)) count += countIn(content);
    if (source !== null && typeof source === 'object' && Array.isArray(source.content)) count += countIn(source.content);
  }
  return count;
}

/** What `limitStoredBreakpoints` sends: the history to render, and how many stored breakpoints it left out. */
export interface LimitedHistory {
  history: readonly SessionEvent[];
  /** Breakpoints the history's stored Anthropic content carries (stale native forms, which are not rendered, excluded). */
  stored: number;
  dropped: number;
}

/**
 * The history with only the newest `keep` of the breakpoints stored in its events' Anthropic content: a
 * caller's `cache_control` is kept with its message (so the log gives the message back exactly) and would
 * otherwise be sent again on every later turn, until the request has more than the API's 4. The oldest go
 * first, in log order; events that lose one are copies, the others are the same objects.
 */
export function limitStoredBreakpoints(history: readonly SessionEvent[], keep: number): LimitedHistory {
  const counts = history.map(storedBreakpointCount);
  const stored = counts.reduce((sum, n) => sum + n, 0);
  const dropped = Math.max(0, stored - Math.max(0, keep));
  if (dropped === 0) return { history, stored, dropped };
  let left = dropped;
  const limited = history.map((event, i) => {
    const count = counts[i]!;
    if (count === 0 || left === 0) return event;
    const record = event.metadata[METADATA_NATIVE] as NativeRecord;
    // The stored value is JSON (binary and URLs tagged), so a structured clone is an exact, independent copy.
    const value = structuredClone(record.value) as unknown[];
    left -= unmarkFirst(value, Math.min(count, left));
    return event.with({ metadata: { ...event.metadata, [METADATA_NATIVE]: { ...record, value } } });
  });
  return { history: limited, stored, dropped };
}

/** Breakpoints in an event's stored Anthropic content, counted only when that content is what gets rendered. */
function storedBreakpointCount(event: SessionEvent): number {
  const record = event.metadata[METADATA_NATIVE] as Partial<NativeRecord> | undefined;
  if (record === undefined || record === null || typeof record !== 'object' || record.format !== ANTHROPIC_FORMAT) return 0;
  if (!Array.isArray(record.value)) return 0;
  const count = countIn(record.value);
  // A strategy that rewrote the message (masking...) left the native form stale: it is not rendered, so neither are its breakpoints.
  return count === 0 || nativeValue(event, ANTHROPIC_FORMAT) === undefined ? 0 : count;
}

/** Removes the first `n` breakpoints, in the order `countIn` counts them, from `blocks` (in place); returns how many. */
function unmarkFirst(blocks: unknown[], n: number): number {
  let removed = 0;
  for (const block of blocks) {
    if (removed === n) break;
    if (block === null || typeof block !== 'object') continue;
    const record = block as Record<string, unknown>;
    if (marked(record)) {
      delete record.cache_control;
      removed++;
    }
    const { content, source } = record as { content?: unknown; source?: { content?: unknown } };
    if (Array.isArray(content)) removed += unmarkFirst(content, n - removed);
    if (source !== null && typeof source === 'object' && Array.isArray(source.content)) {
      removed += unmarkFirst(source.content, n - removed);
    }
  }
  return removed;
}

/**
 * The prompt with `cache_control` on the stable history's end and then on the system prompt's last block,
 * as far as the request stays within MAX_CACHE_BREAKPOINTS counting the caller's own. Copies whatever it
 * marks: the prompt's objects may be the caller's request or an event's stored content.
 */
export function withCacheBreakpoints(
  prompt: AnthropicPrompt,
  params: BreakpointParams,
  historyEnd: BlockPosition | undefined,
): AnthropicPrompt {
  let room = MAX_CACHE_BREAKPOINTS - countCacheBreakpoints(prompt, params);
  let messages = prompt.messages;
  if (historyEnd !== undefined && room > 0) {
    const placed = markMessages(messages, historyEnd);
    if (placed !== undefined) {
      messages = placed;
      room--;
    }
  }
  let system = prompt.system;
  if (system !== undefined && room > 0) system = markSystem(system) ?? system;
  return system === undefined ? { messages } : { system, messages };
}

/** Marks the last cacheable block at or before `at`; undefined when it is marked already (or there is none). */
function markMessages(messages: readonly MessageParam[], at: BlockPosition): MessageParam[] | undefined {
  for (let m = at.message, last = at.block; m >= 0; m--, last = Number.POSITIVE_INFINITY) {
    const blocks = blocksOf(messages[m]!.content);
    for (let j = Math.min(last, blocks.length - 1); j >= 0; j--) {
      const block = blocks[j]!;
      if (!isCacheable(block)) continue;
      if (marked(block)) return undefined;
      const content = blocks.map((b, k): ContentBlockParam => (k === j ? { ...block, cache_control: ephemeral() } : b));
      // The prompt's messages are user and assistant turns, whose content takes any block.
      return messages.map((message, k) => (k === m ? ({ ...message, content } as MessageParam) : message));
    }
  }
  return undefined;
}

function markSystem(system: string | TextBlockParam[]): TextBlockParam[] | undefined {
  const blocks: TextBlockParam[] = typeof system === 'string' ? [{ type: 'text', text: system }] : system;
  for (let j = blocks.length - 1; j >= 0; j--) {
    const block = blocks[j]!;
    if (block.text === '') continue;
    if (marked(block)) return undefined;
    return blocks.map((b, k) => (k === j ? { ...block, cache_control: ephemeral() } : b));
  }
  return undefined;
}
