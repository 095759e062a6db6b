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
import type { PersistableMessage } from '../ChatProvider.js';
import { messageOf, nativeValue, withNative } from '../nativeMessages.js';

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
  /** Content of the `tool_result` (with `is_error`) added for a `tool_use` whose result is not in the log. */
  missingToolResult?: string;
}

export interface FromAnthropicOptions {
  /** A `tool_result` carries only the call id; this recovers the tool's name (e.g. from the history). */
  resolveToolName?: (toolUseId: string) => string | undefined;
}

export const DEFAULT_MISSING_TOOL_RESULT = '[no result was recorded for this tool call]';

type Blocks = ContentBlockParam[];
type Content = string | Blocks;

/** One event rendered as Anthropic content, before neighbours of the same role are merged. */
interface Part {
  role: 'user' | 'assistant';
  content: Content;
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

function partOf(item: SessionEvent | Message, system: Content[]): Part | null {
  const message = messageOf(item);
  const native = nativeValue(item, ANTHROPIC_FORMAT) as Content | undefined;
  switch (message.type) {
    case 'system':
      system.push(native ?? message.text);
      return null;
    case 'user':
      return { role: 'user', content: native ?? message.text };
    case 'assistant':
      return { role: 'assistant', content: native ?? assistantContent(message, false) };
    case 'tool':
      return { role: 'user', content: native ?? toolResultBlocks(message) };
  }
}

const toBlocks = (content: Content): Blocks =>
  typeof content === 'string' ? (content === '' ? [] : [{ type: 'text', text: content }]) : content;

function isEmpty(content: Content): boolean {
  return typeof content === 'string' ? content === '' : content.length === 0;
}

/** Neighbours of one role become one message (the API combines them the same way); tool results lead a user message. */
function merge(parts: readonly Part[]): Part[] {
  const out: Part[] = [];
  for (const part of parts) {
    if (isEmpty(part.content)) continue;
    const last = out[out.length - 1];
    if (last !== undefined && last.role === part.role) last.content = [...toBlocks(last.content), ...toBlocks(part.content)];
    else out.push({ ...part });
  }
  for (const part of out) {
    if (part.role !== 'user' || typeof part.content === 'string') continue;
    const results = part.content.filter((b) => b.type === 'tool_result');
    if (results.length === 0 || part.content.slice(0, results.length).every((b) => b.type === 'tool_result')) continue;
    part.content = [...results, ...part.content.filter((b) => b.type !== 'tool_result')];
  }
  return out;
}

const toolUseIds = (part: Part | undefined): string[] =>
  part === undefined || part.role !== 'assistant' || typeof part.content === 'string'
    ? []
    : part.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));

function applyThinkingPolicy(parts: Part[], policy: 'keep' | 'drop'): void {
  for (const part of parts) {
    if (part.role !== 'assistant' || typeof part.content === 'string') continue;
    part.content = part.content.filter((b) => {
      if (b.type === 'redacted_thinking') return policy === 'keep';
      if (b.type === 'thinking') return policy === 'keep' && typeof b.signature === 'string' && b.signature !== '';
      return true;
    });
  }
}

/**
 * Makes tool use valid for the Messages API: every `tool_result` answers a `tool_use` of the assistant message
 * right before it (results whose call is not there — archived, filtered out — are left out), and every
 * `tool_use` gets its result in the next message (a call whose result was never recorded gets an `is_error`
 * result saying so). Messages that need no repair are left exactly as they are.
 */
function pairToolUse(parts: Part[], missingText: string): Part[] {
  // 1. Orphan results out; a user message left empty goes, and its neighbours may now merge.
  const kept: Part[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.role === 'user' && typeof part.content !== 'string') {
      const open = new Set(toolUseIds(parts[i - 1]));
      const content = part.content.filter((b) => b.type !== 'tool_result' || open.has(b.tool_use_id));
      if (content.length !== part.content.length) {
        if (content.length === 0) continue;
        kept.push({ role: 'user', content });
        continue;
      }
    }
    kept.push(part);
  }
  const merged = merge(kept);
  // 2. Missing results in.
  for (let i = 0; i < merged.length; i++) {
    const ids = toolUseIds(merged[i]);
    if (ids.length === 0) continue;
    const next = merged[i + 1];
    const present = new Set(
      next === undefined || next.role !== 'user' || typeof next.content === 'string'
        ? []
        : next.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])),
    );
    const missing: ToolResultBlockParam[] = ids
      .filter((id) => !present.has(id))
      .map((id) => ({ type: 'tool_result', tool_use_id: id, content: missingText, is_error: true }));
    if (missing.length === 0) continue;
    if (next === undefined || next.role !== 'user') merged.splice(i + 1, 0, { role: 'user', content: missing });
    else {
      const blocks = toBlocks(next.content);
      const results = blocks.filter((b) => b.type === 'tool_result');
      next.content = [...results, ...missing, ...blocks.filter((b) => b.type !== 'tool_result')];
    }
  }
  return merged;
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
  if (!Array.isArray(items)) throw new InvalidArgumentError('items must not be null');
  const thinking = options.thinking ?? 'keep';
  if (thinking !== 'keep' && thinking !== 'drop') throw new InvalidArgumentError("thinking must be 'keep' or 'drop'");
  const system: Content[] = [];
  const parts: Part[] = [];
  for (const item of items) {
    const part = partOf(item, system);
    if (part !== null) parts.push(part);
  }
  for (const message of request) {
    if (message.role === 'system') system.push(message.content as Content);
    else parts.push({ role: message.role, content: message.content as Content });
  }
  if (requestSystem !== undefined) system.push(requestSystem);
  applyThinkingPolicy(parts, thinking);
  const messages = pairToolUse(merge(parts), options.missingToolResult ?? DEFAULT_MISSING_TOOL_RESULT).map((p): MessageParam => ({
    role: p.role,
    content: p.content,
  }));
  const prompt = systemPrompt(system);
  return prompt === undefined ? { messages } : { system: prompt, messages };
}
