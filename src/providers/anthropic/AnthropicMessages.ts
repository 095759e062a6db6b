import type {
  ContentBlock,
  ContentBlockParam,
  Message as AnthropicReply,
  MessageParam,
  TextBlockParam,
  ToolResultBlockParam,
  ToolUseBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import { InvalidArgumentError } from '../../errors.js';
import { Messages, type AssistantMessage, type Message, type ToolCall, type ToolMessage } from '../../session/Message.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import type { PersistableMessage } from '../../chat/ChatProvider.js';
import { messageOf, nativeValue, withNative } from '../../chat/nativeMessages.js';
import { planToolPairing, type ToolExchangeMessage } from '../../session/toolCallPairing.js';
import { ANTHROPIC_NATIVE_COMPACTION, nativeCompactionPlan } from '../../compaction/nativeCompaction.js';

/** The `format` of Anthropic content kept in event metadata. */
export const ANTHROPIC_FORMAT = 'anthropic';

/** A Messages API prompt: the system prompt separated, then alternating user and assistant messages. */
export interface AnthropicPrompt {
  system?: string | TextBlockParam[];
  messages: MessageParam[];
}

export interface ToAnthropicOptions {
  /**
   * 'keep' (default): signed `thinking` and `redacted_thinking` blocks go back exactly as received — the API
   * requires them unchanged on the assistant turn of a tool loop and ignores them on earlier turns; reasoning
   * without a signature (another provider's, or a rewritten event's) is left out, because the API rejects it.
   * 'drop': no thinking blocks at all.
   */
  thinking?: 'keep' | 'drop';
  /** Content of the `tool_result` (with `is_error`) a prompt gets for a `tool_use` the user moved on from. */
  missingToolResult?: string;
  /**
   * A summary that carries an Anthropic compaction (`NativeCompactionStrategy` with `AnthropicCompactor`):
   * 'replay' (default) sends its `compaction` block back verbatim, as the first message, in place of the
   * summary pair — only when it opens the conversation (the API refuses a compaction block anywhere else, and
   * more than one), otherwise its text; 'text' always sends the summary's text. A compaction block needs the
   * beta Messages endpoint (`client.beta.messages`, beta `compact-2026-09-04`): `AnthropicChatProvider` sends
   * such a prompt there.
   */
  nativeCompaction?: 'replay' | 'text';
}

export interface FromAnthropicOptions {
  /** A `tool_result` carries only the call id; this recovers the tool's name (e.g. from the history). */
  resolveToolName?: (toolUseId: string) => string | undefined;
}

export const DEFAULT_MISSING_TOOL_RESULT = '[no result was recorded for this tool call]';

type Blocks = ContentBlockParam[];
type Content = string | Blocks;

/** One event rendered as Anthropic content, before neighbours of the same role are merged; then one message. */
interface Part {
  role: 'user' | 'assistant';
  content: Content;
  /** Per block of `content` (a non-empty string is one): the index of what it was rendered from (see RenderedPrompt). */
  origins: number[];
}

// ---------------------------------------------------------------------------------------------------------
// Anthropic → log

/**
 * Log entries for one Anthropic message, in the order they are appended. A user message carrying
 * `tool_result` blocks becomes a tool entry (every result) and, when it also carries other content, a user
 * entry after it: the results answer the previous turn, the rest opens the next one. Whatever the four
 * message kinds cannot hold (block structure, images, documents, citations, signatures, cache control) is
 * kept in the entry's metadata, so `toAnthropicMessages` gives the message back exactly.
 */
export function fromAnthropicMessage(param: MessageParam, options: FromAnthropicOptions = {}): PersistableMessage[] {
  if (param === null || param === undefined) throw new InvalidArgumentError('message must not be null');
  const content = param.content as Content;
  switch (param.role) {
    case 'system': {
      const text = typeof content === 'string' ? content : blocksText(content);
      return [withNative(Messages.system(text), ANTHROPIC_FORMAT, content, text)];
    }
    case 'assistant': {
      const message = assistantMessage(content);
      return [withNative(message, ANTHROPIC_FORMAT, content, assistantContent(message, false))];
    }
    case 'user': {
      if (typeof content === 'string') return [{ message: Messages.user(content) }];
      const results = content.filter((b): b is ToolResultBlockParam => b.type === 'tool_result');
      const rest = content.filter((b) => b.type !== 'tool_result');
      if (results.length === 0) return [userEntry(rest, false)];
      const tool = Messages.tool(
        results.map((r) =>
          Messages.toolResponse(r.tool_use_id, options.resolveToolName?.(r.tool_use_id) ?? '', toolResultText(r)),
        ),
      );
      const entries = [withNative(tool, ANTHROPIC_FORMAT, results, toolResultBlocks(tool))];
      if (rest.length > 0) entries.push(userEntry(rest, true));
      return entries;
    }
    default:
      throw new InvalidArgumentError(`unsupported Anthropic message role: ${String((param as { role?: unknown }).role)}`);
  }
}

/** Log entries for a whole prompt: the system prompt first, then every message. */
export function fromAnthropicPrompt(prompt: AnthropicPrompt, options: FromAnthropicOptions = {}): PersistableMessage[] {
  const entries: PersistableMessage[] = [];
  if (prompt.system !== undefined) entries.push(...fromAnthropicMessage({ role: 'system', content: prompt.system }));
  const names = new Map<string, string>();
  const resolveToolName = (id: string) => options.resolveToolName?.(id) ?? names.get(id);
  for (const message of prompt.messages) {
    if (message.role === 'assistant' && typeof message.content !== 'string') {
      for (const b of message.content) if (b.type === 'tool_use') names.set(b.id, b.name);
    }
    entries.push(...fromAnthropicMessage(message, { resolveToolName }));
  }
  return entries;
}

/**
 * A reply as the assistant message param to send back: the reply's content blocks, without the fields that are
 * null only because a response always carries them (`citations: null`...) and the default `direct` caller.
 */
export function anthropicReplyToParam(reply: Pick<AnthropicReply, 'content'>): MessageParam {
  return { role: 'assistant', content: reply.content.map(replyBlockToParam) };
}

/** The log entry of a reply. */
export function fromAnthropicReply(reply: Pick<AnthropicReply, 'content'>): PersistableMessage {
  return fromAnthropicMessage(anthropicReplyToParam(reply))[0]!;
}

function replyBlockToParam(block: ContentBlock): ContentBlockParam {
  const param: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(block)) {
    if (value === null || value === undefined) continue;
    if (key === 'caller' && (value as { type?: unknown }).type === 'direct') continue;
    param[key] = value;
  }
  return param as unknown as ContentBlockParam;
}

function userEntry(blocks: Blocks, split: boolean): PersistableMessage {
  const message = Messages.user(blocksText(blocks));
  // A split-off part is merged back into block form, so only its blocks need to match.
  return withNative(message, ANTHROPIC_FORMAT, blocks, split ? userBlocks(message) : message.text);
}

function assistantMessage(content: Content): AssistantMessage {
  if (typeof content === 'string') return Messages.assistant(content);
  const toolCalls: ToolCall[] = content
    .filter((b): b is ToolUseBlockParam => b.type === 'tool_use')
    .map((b) => Messages.toolCall(b.id, b.name, JSON.stringify(b.input ?? {})));
  const thinking = content.flatMap((b) => (b.type === 'thinking' ? [b.thinking] : []));
  const text = blocksText(
    content.filter((b) => b.type !== 'tool_use' && b.type !== 'thinking' && b.type !== 'redacted_thinking'),
  );
  return Messages.assistant(text === '' ? null : text, {
    toolCalls,
    ...(thinking.length > 0 ? { reasoning: thinking.join('\n\n') } : {}),
  });
}

/** The searchable text of content blocks: their text, and a visible marker for what is not text. */
function blocksText(blocks: readonly ContentBlockParam[]): string {
  let out = '';
  for (const block of blocks) {
    const piece = blockText(block);
    if (piece === '') continue;
    out += block.type === 'text' || out === '' ? piece : `\n${piece}`;
  }
  return out;
}

function blockText(block: ContentBlockParam): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `[image: ${sourceLabel(block.source)}]`;
    case 'document':
      return `[document: ${block.title ?? sourceLabel(block.source)}]`;
    case 'search_result':
      return `[search result: ${block.title} (${block.source})]\n${block.content.map((c) => c.text).join('')}`;
    case 'tool_result':
      return toolResultText(block);
    default:
      return `[${block.type}]`;
  }
}

function sourceLabel(source: { type: string; url?: string; file_id?: string; media_type?: string }): string {
  if (source.type === 'url' && source.url !== undefined) return source.url;
  if (source.type === 'file' && source.file_id !== undefined) return `file ${source.file_id}`;
  return source.media_type ?? source.type;
}

function toolResultText(block: ToolResultBlockParam): string {
  const content = block.content;
  if (content === undefined) return '';
  return typeof content === 'string' ? content : blocksText(content as ContentBlockParam[]);
}

// ---------------------------------------------------------------------------------------------------------
// log → Anthropic

function userBlocks(message: { text: string }): Blocks {
  return message.text === '' ? [] : [{ type: 'text', text: message.text }];
}

function toolResultBlocks(message: ToolMessage): ToolResultBlockParam[] {
  return message.responses.map((r) => ({ type: 'tool_result', tool_use_id: r.id, content: r.responseData }));
}

function toolInput(args: string): unknown {
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
  } catch {
    // fall through: the API needs an object, so the raw text is wrapped in one
  }
  return { arguments: args };
}

/**
 * The content an assistant Message converts to. Reasoning is never rendered: without its signature the API
 * rejects a thinking block, and only a stored native form has one.
 */
function assistantContent(message: AssistantMessage, forceBlocks: boolean): Content {
  const blocks: Blocks = [];
  if (message.text !== null && message.text !== '') blocks.push({ type: 'text', text: message.text });
  for (const call of message.toolCalls ?? []) {
    blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: toolInput(call.arguments) });
  }
  if (!forceBlocks && blocks.length <= 1 && (blocks[0]?.type ?? 'text') === 'text') return message.text ?? '';
  return blocks;
}

function partOf(item: SessionEvent | Message, system: Content[], origin: number): Part | null {
  const message = messageOf(item);
  const native = nativeValue(item, ANTHROPIC_FORMAT) as Content | undefined;
  switch (message.type) {
    case 'system':
      system.push(native ?? message.text);
      return null;
    case 'user':
      return part('user', native ?? message.text, origin);
    case 'assistant':
      return part('assistant', native ?? assistantContent(message, false), origin);
    case 'tool':
      return part('user', native ?? toolResultBlocks(message), origin);
  }
}

/**
 * The Anthropic compaction that opens the conversation (only system messages and its own shadow prompt before
 * it): its item index, its blocks, and the items it leaves out. Null when there is none: any other native
 * summary is sent as its text, since the API takes one compaction block, first.
 */
function leadingCompaction(
  items: ReadonlyArray<SessionEvent | Message>,
): { index: number; blocks: Blocks; skip: Set<number> } | null {
  const plan = nativeCompactionPlan(items, ANTHROPIC_NATIVE_COMPACTION);
  if (plan.size === 0) return null;
  for (let i = 0; i < items.length; i++) {
    if (messageOf(items[i]!).type === 'system') continue;
    const entry = plan.get(i);
    if (entry === null) continue; // the shadow prompt of the summary that follows
    if (!Array.isArray(entry) || entry.length === 0) return null;
    const skip = new Set<number>();
    for (const [k, v] of plan) if (v === null && k === i - 1) skip.add(k);
    return { index: i, blocks: entry as Blocks, skip };
  }
  return null;
}

function part(role: Part['role'], content: Content, origin: number): Part {
  const blocks = typeof content === 'string' ? (content === '' ? 0 : 1) : content.length;
  return { role, content, origins: new Array<number>(blocks).fill(origin) };
}

const toBlocks = (content: Content): Blocks =>
  typeof content === 'string' ? (content === '' ? [] : [{ type: 'text', text: content }]) : content;

/** A copy of the part with only the blocks for which `keep` holds, and their origins. */
function keepBlocks(part: Part, keep: (block: ContentBlockParam) => boolean): Part {
  const content: Blocks = [];
  const origins: number[] = [];
  toBlocks(part.content).forEach((block, i) => {
    if (!keep(block)) return;
    content.push(block);
    origins.push(part.origins[i]!);
  });
  return { role: part.role, content, origins };
}

/** The part's tool results first, the rest after, each in its order (a part already in that order is returned as it is). */
function resultsFirst(part: Part): Part {
  if (typeof part.content === 'string') return part;
  const blocks = part.content;
  const firstOther = blocks.findIndex((b) => b.type !== 'tool_result');
  if (firstOther < 0 || !blocks.some((b, i) => i > firstOther && b.type === 'tool_result')) return part;
  const results = [...blocks.keys()].filter((i) => blocks[i]!.type === 'tool_result');
  const order = [...results, ...[...blocks.keys()].filter((i) => blocks[i]!.type !== 'tool_result')];
  return { role: part.role, content: order.map((i) => blocks[i]!), origins: order.map((i) => part.origins[i]!) };
}

function isEmpty(content: Content): boolean {
  return typeof content === 'string' ? content === '' : content.length === 0;
}

/** Neighbours of one role become one message (the API combines them the same way); tool results lead a user message. */
function merge(parts: readonly Part[]): Part[] {
  const out: Part[] = [];
  // Parts whose content array merge made itself and may append to (a part's own array is the caller's), so a
  // long run of one role is joined in linear time rather than re-copied at every message.
  const owned = new Set<Part>();
  for (const part of parts) {
    if (isEmpty(part.content)) continue;
    const last = out[out.length - 1];
    if (last !== undefined && last.role === part.role) {
      if (!owned.has(last)) {
        last.content = [...toBlocks(last.content)];
        owned.add(last);
      }
      (last.content as Blocks).push(...toBlocks(part.content));
      last.origins.push(...part.origins);
    } else out.push({ ...part, origins: [...part.origins] });
  }
  for (let k = 0; k < out.length; k++) if (out[k]!.role === 'user') out[k] = resultsFirst(out[k]!);
  return out;
}

/** The `tool_use` blocks of an assistant part: their ids and origins. */
function toolUses(part: Part | undefined): { ids: string[]; origins: number[] } {
  const uses = { ids: [] as string[], origins: [] as number[] };
  if (part === undefined || part.role !== 'assistant' || typeof part.content === 'string') return uses;
  part.content.forEach((b, i) => {
    if (b.type !== 'tool_use') return;
    uses.ids.push(b.id);
    uses.origins.push(part.origins[i]!);
  });
  return uses;
}

function applyThinkingPolicy(parts: Part[], policy: 'keep' | 'drop'): void {
  const sent = (b: ContentBlockParam): boolean => {
    if (b.type === 'redacted_thinking') return policy === 'keep';
    if (b.type === 'thinking') return policy === 'keep' && typeof b.signature === 'string' && b.signature !== '';
    return true;
  };
  for (let k = 0; k < parts.length; k++) {
    const part = parts[k]!;
    if (part.role === 'assistant' && typeof part.content !== 'string') parts[k] = keepBlocks(part, sent);
  }
}

/** The `tool_result` blocks of a user part, with their origins. */
function toolResults(part: Part): { blocks: ToolResultBlockParam[]; origins: number[] } {
  const results = { blocks: [] as ToolResultBlockParam[], origins: [] as number[] };
  if (part.role !== 'user' || typeof part.content === 'string') return results;
  part.content.forEach((b, i) => {
    if (b.type !== 'tool_result') return;
    results.blocks.push(b);
    results.origins.push(part.origins[i]!);
  });
  return results;
}

function exchangeOf(part: Part): ToolExchangeMessage {
  if (part.role === 'assistant') return { role: 'assistant', calls: toolUses(part).ids };
  const blocks = toBlocks(part.content);
  return {
    role: blocks.some((b) => b.type !== 'tool_result') ? 'user' : 'tool',
    results: toolResults(part).blocks.map((b) => b.tool_use_id),
  };
}

/**
 * Makes tool use valid for the Messages API with the library's one pairing rule (`planToolPairing`): every
 * `tool_result` answers a `tool_use` of the assistant message right before it — a late one moves up there, one
 * whose call is not before it (archived, filtered out) or is answered already is left out — and a `tool_use`
 * the user moved on from (a newer user message follows it) gets an `is_error` result saying no result was
 * recorded. A `tool_use` still waiting for its result is left as it is. Messages that need no repair are left
 * exactly as they are.
 */
function pairToolUse(parts: Part[], missingText: string): Part[] {
  const merged = merge(parts);
  const plan = planToolPairing(merged.map(exchangeOf));
  if (plan.unchanged) return merged;
  const out: Part[] = [];
  /** Results for the calls of the previous assistant message, to follow what the next user message already has. */
  let added: Part | null = null;
  merged.forEach((part, i) => {
    const dispositions = plan.results[i]!;
    let k = 0;
    const kept = dispositions.every((d) => d === 'keep')
      ? part
      : keepBlocks(part, (b) => b.type !== 'tool_result' || dispositions[k++] === 'keep');
    if (added !== null && part.role === 'assistant') out.push(added);
    out.push(kept);
    if (added !== null && part.role === 'user') out.push(added);
    added = null;
    const inserts = plan.inserts.get(i);
    if (inserts === undefined) return;
    const uses = toolUses(part);
    const content: ToolResultBlockParam[] = [];
    const origins: number[] = [];
    for (const insert of inserts) {
      if (insert.result === null) {
        content.push({ type: 'tool_result', tool_use_id: insert.callId, content: missingText, is_error: true });
        origins.push(uses.origins[uses.ids.indexOf(insert.callId)]!);
      } else {
        const moved = toolResults(merged[insert.result.message]!);
        content.push(moved.blocks[insert.result.index]!);
        origins.push(moved.origins[insert.result.index]!);
      }
    }
    added = { role: 'user', content, origins };
  });
  if (added !== null) out.push(added);
  // Merging joins the added results with the user message they follow and puts every result first.
  return merge(out);
}

function systemPrompt(system: Content[]): string | TextBlockParam[] | undefined {
  const nonEmpty = system.filter((s) => !isEmpty(s));
  if (nonEmpty.length === 0) return undefined;
  if (nonEmpty.length === 1) return nonEmpty[0] as string | TextBlockParam[];
  return nonEmpty.flatMap((s) => toBlocks(s) as TextBlockParam[]);
}

/**
 * Maps events or messages to a Messages API prompt: system messages go to `system` (in order), tool
 * results become `tool_result` blocks leading the next user message, neighbours of one role are combined,
 * and tool use is paired as the API requires (see `pairToolUse`). Events written by the Anthropic
 * integration come back exactly as they were received; others are converted from their Message.
 */
export function toAnthropicMessages(
  items: ReadonlyArray<SessionEvent | Message>,
  options: ToAnthropicOptions = {},
): AnthropicPrompt {
  return anthropicPrompt(items, [], undefined, options);
}

/** The prompt for the log `items` followed by `request` messages (and the request's own system prompt, last). */
export function anthropicPrompt(
  items: ReadonlyArray<SessionEvent | Message>,
  request: readonly MessageParam[],
  requestSystem: string | TextBlockParam[] | undefined,
  options: ToAnthropicOptions = {},
): AnthropicPrompt {
  return renderAnthropicPrompt(items, request, requestSystem, options).prompt;
}

/** A prompt with, per block of its messages, what the block was rendered from. */
export interface RenderedPrompt {
  prompt: AnthropicPrompt;
  /**
   * `origins[m][b]`: the index in `items` of the item block `b` of message `m` was rendered from
   * (`items.length + i` for request message `i`); a result added for a tool call whose result is missing has
   * the call's. A string content is one block.
   */
  origins: number[][];
}

/** anthropicPrompt, saying where each block came from: merging and tool pairing move blocks across messages. */
export function renderAnthropicPrompt(
  items: ReadonlyArray<SessionEvent | Message>,
  request: readonly MessageParam[],
  requestSystem: string | TextBlockParam[] | undefined,
  options: ToAnthropicOptions = {},
): RenderedPrompt {
  if (!Array.isArray(items)) throw new InvalidArgumentError('items must not be null');
  const thinking = options.thinking ?? 'keep';
  if (thinking !== 'keep' && thinking !== 'drop') throw new InvalidArgumentError("thinking must be 'keep' or 'drop'");
  const nativeCompaction = options.nativeCompaction ?? 'replay';
  if (nativeCompaction !== 'replay' && nativeCompaction !== 'text') {
    throw new InvalidArgumentError("nativeCompaction must be 'replay' or 'text'");
  }
  const system: Content[] = [];
  const parts: Part[] = [];
  const native = nativeCompaction === 'replay' ? leadingCompaction(items) : null;
  items.forEach((item, i) => {
    if (native !== null && native.skip.has(i)) return;
    const p = native !== null && native.index === i ? part('assistant', native.blocks, i) : partOf(item, system, i);
    if (p !== null) parts.push(p);
  });
  request.forEach((message, i) => {
    if (message.role === 'system') system.push(message.content as Content);
    else parts.push(part(message.role, message.content as Content, items.length + i));
  });
  if (requestSystem !== undefined) system.push(requestSystem);
  applyThinkingPolicy(parts, thinking);
  const rendered = pairToolUse(merge(parts), options.missingToolResult ?? DEFAULT_MISSING_TOOL_RESULT);
  const messages = rendered.map((p): MessageParam => ({ role: p.role, content: p.content }));
  const prompt = systemPrompt(system);
  return { prompt: prompt === undefined ? { messages } : { system: prompt, messages }, origins: rendered.map((p) => p.origins) };
}
