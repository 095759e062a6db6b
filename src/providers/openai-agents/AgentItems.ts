import type { AgentInputItem, FunctionCallItem, FunctionCallResultItem } from '@openai/agents';
import { InvalidArgumentError } from '../../errors.js';
import { Messages, type Message } from '../../session/Message.js';
import type { PersistableMessage } from '../../chat/ChatProvider.js';
import { messageOf, nativeValue, stableJson, withNative } from '../../chat/nativeMessages.js';
import { planToolPairing, type ToolExchangeMessage } from '../../session/toolCallPairing.js';
import {
  isNativeCompactionShadow,
  nativeCompactionPayload,
  OPENAI_NATIVE_COMPACTION,
} from '../../compaction/nativeCompaction.js';
import { SessionEvent } from '../../session/SessionEvent.js';

/** The `format` of Agents SDK items kept in event metadata. */
export const OPENAI_AGENTS_FORMAT = 'openai-agents';

export const DEFAULT_MISSING_FUNCTION_OUTPUT = '[no result was recorded for this tool call]';

type Item = AgentInputItem;
type Loose = Record<string, unknown> & { type?: string };

/**
 * Calls that the client runs and answers with a matching output item (by `callId`): stored as a tool call
 * and a tool result, so that compaction keeps each call with its output.
 */
const CALL_KINDS: Record<string, { output: string; name: (item: Loose) => string; args: (item: Loose) => unknown }> = {
  function_call: { output: 'function_call_result', name: (i) => String(i.name), args: (i) => i.arguments },
  computer_call: { output: 'computer_call_result', name: () => 'computer', args: (i) => i.action ?? i.actions ?? {} },
  shell_call: { output: 'shell_call_output', name: () => 'shell', args: (i) => i.action ?? {} },
  apply_patch_call: { output: 'apply_patch_call_output', name: () => 'apply_patch', args: (i) => i.operation ?? {} },
  program: { output: 'program_output', name: () => 'program', args: (i) => ({ code: i.code }) },
};
const OUTPUT_KINDS = new Map(Object.entries(CALL_KINDS).map(([call, kind]) => [kind.output, call]));

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value))
    return value
      .map(textOf)
      .filter((t) => t !== '')
      .join('\n');
  if (value === null || typeof value !== 'object') return value === undefined ? '' : JSON.stringify(value);
  const part = value as Loose;
  switch (part.type) {
    case 'text':
    case 'input_text':
    case 'output_text':
    case 'reasoning_text':
      return String(part.text ?? '');
    case 'refusal':
      return `[refusal: ${String(part.refusal)}]`;
    case 'image':
    case 'input_image':
      return '[image]';
    case 'file':
    case 'input_file':
      return `[file${typeof part.filename === 'string' ? ` ${part.filename}` : ''}]`;
    case 'audio':
      return typeof part.transcript === 'string' ? part.transcript : '[audio]';
    case 'computer_screenshot':
      return '[screenshot]';
    default:
      return JSON.stringify(part);
  }
}

const callId = (item: Loose): string => String(item.callId ?? item.call_id ?? item.id ?? '');

/** The neutral message an item stands for (searchable text, tool calls and results, reasoning). */
function projection(item: Item): Message {
  const loose = item as Loose;
  if ('role' in item) {
    const text = textOf(item.content);
    if (item.role === 'user') return Messages.user(text);
    if (item.role === 'system') return Messages.system(text);
    return Messages.assistant(text === '' ? null : text);
  }
  const type = String(loose.type);
  const call = CALL_KINDS[type];
  if (call !== undefined) {
    const args = call.args(loose);
    return Messages.assistant(null, {
      toolCalls: [Messages.toolCall(callId(loose), call.name(loose), typeof args === 'string' ? args : JSON.stringify(args))],
    });
  }
  const callKind = OUTPUT_KINDS.get(type);
  if (callKind !== undefined) {
    const name = callKind === 'function_call' ? String(loose.name) : CALL_KINDS[callKind]!.name(loose);
    return Messages.tool([Messages.toolResponse(callId(loose), name, textOf(loose.output))]);
  }
  if (type === 'reasoning') {
    const reasoning = textOf(loose.content) || textOf(loose.rawContent);
    return Messages.assistant(null, reasoning === '' ? {} : { reasoning });
  }
  if (type === 'hosted_tool_call') {
    return Messages.assistant(
      `[hosted tool ${String(loose.name)}${typeof loose.output === 'string' ? `: ${loose.output}` : ''}]`,
    );
  }
  // Provider-native compaction, tool search and unknown items: kept opaque, visible as a marker.
  return Messages.assistant(`[${type}]`);
}

/**
 * The log entry for one Agents SDK item. Messages, function calls and their outputs, reasoning, computer,
 * shell and apply-patch calls and outputs fill in the neutral message kinds; the item itself is kept in
 * metadata whenever the Message cannot give it back exactly (ids, status, provider data, encrypted reasoning,
 * provider-native compaction items), so `toAgentItems` returns it unchanged.
 */
export function fromAgentItem(item: Item): PersistableMessage {
  if (item === null || typeof item !== 'object') throw new InvalidArgumentError('item must not be null');
  const message = projection(item);
  return withNative(message, OPENAI_AGENTS_FORMAT, [item], derivedItems(message));
}

/** The items a Message converts to when there is no stored native form (e.g. a log written by another integration). */
function derivedItems(message: Message): Item[] {
  switch (message.type) {
    case 'user':
      return [{ role: 'user', content: message.text }];
    case 'system':
      return [{ role: 'system', content: message.text }];
    case 'assistant': {
      const items: Item[] = [];
      if (message.text !== null && message.text !== '') {
        items.push({ role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: message.text }] });
      }
      // Reasoning without its provider data cannot be replayed; it stays searchable in the log.
      for (const c of message.toolCalls ?? []) {
        items.push({ type: 'function_call', callId: c.id, name: c.name, arguments: c.arguments } satisfies FunctionCallItem);
      }
      return items;
    }
    case 'tool':
      return message.responses.map((r): FunctionCallResultItem => ({
        type: 'function_call_result',
        callId: r.id,
        name: r.name,
        status: 'completed',
        output: r.responseData,
      }));
  }
}

/**
 * The items one event stands for: its stored item, or the conversion of its Message. A summary carrying an
 * OpenAI compaction (`NativeCompactionStrategy` with `OpenAIResponsesCompactor`) stands for the compaction's
 * output items — the user messages it kept, then its `compaction` item, `encrypted_content` verbatim — and its
 * shadow prompt for none: the runner sends them to the Responses API in place of the summary pair.
 */
export function itemsOf(item: SessionEvent | Message): Item[] {
  if (item instanceof SessionEvent) {
    const compaction = nativeCompactionPayload(item, OPENAI_NATIVE_COMPACTION);
    if (Array.isArray(compaction)) return compaction.map(agentItemOfCompactionOutput);
    if (isNativeCompactionShadow(item, OPENAI_NATIVE_COMPACTION)) return [];
  }
  const native = nativeValue(item, OPENAI_AGENTS_FORMAT);
  return Array.isArray(native) ? (native as Item[]) : derivedItems(messageOf(item));
}

/**
 * One item of a `/responses/compact` output as an Agents input item, as `OpenAIResponsesCompactionSession`
 * stores it: a user message keeps its id and content (text parts reduced to `{ type, text }`, images and files
 * in the SDK's own form), the `compaction` item is kept as it is.
 */
function agentItemOfCompactionOutput(wire: unknown): Item {
  const item = wire as Loose;
  if (item.type !== 'message' || item.role !== 'user' || !Array.isArray(item.content)) return item as Item;
  const content = (item.content as Loose[]).map((part): Loose => {
    if (part.type === 'input_text') return { type: 'input_text', text: part.text };
    if (part.type === 'input_image') {
      const image = typeof part.image_url === 'string' && part.image_url !== '' ? part.image_url : { id: part.file_id };
      return { type: 'input_image', image, ...(part.detail !== undefined ? { detail: part.detail } : {}) };
    }
    if (part.type === 'input_file') {
      const file = part.file_data ?? part.file_url ?? { id: part.file_id };
      return { type: 'input_file', file, ...(part.filename !== undefined ? { filename: part.filename } : {}) };
    }
    return part;
  });
  return { ...(item.id !== undefined ? { id: item.id } : {}), type: 'message', role: 'user', content } as Item;
}

const outputCall = (item: Item): string | undefined => OUTPUT_KINDS.get(String((item as Loose).type));

function exchangeOf(item: Item): ToolExchangeMessage {
  const loose = item as Loose;
  if (CALL_KINDS[String(loose.type)] !== undefined) return { role: 'assistant', calls: [callId(loose)] };
  if (outputCall(item) !== undefined) return { role: 'tool', results: [callId(loose)] };
  return 'role' in item && item.role === 'user' ? { role: 'user' } : { role: 'other' };
}

/**
 * The prompt side of the library's one pairing rule (`planToolPairing`) for Responses API input items, which
 * take a call's output anywhere after the call ("No tool call found for function call output", "No tool
 * output found for function call"): an output without its call before it (archived, cut by a limit), or for
 * a call answered already, is left out; a function call the user moved on from (a newer user message follows
 * it) gets an `incomplete` output saying no result was recorded, right after it. A call still waiting for its
 * output is left as it is. The Agents runner needs none of this for a session's history — it drops history
 * calls without an output itself — so `CompactingSession` never applies it; it is for input you send yourself.
 */
export function pairAgentItems(items: readonly Item[], missingOutput = DEFAULT_MISSING_FUNCTION_OUTPUT): Item[] {
  const plan = planToolPairing(items.map(exchangeOf), { placement: 'after-call' });
  if (plan.unchanged) return [...items];
  const out: Item[] = [];
  items.forEach((item, i) => {
    if (plan.results[i]!.every((d) => d === 'keep')) out.push(item);
    for (const insert of plan.inserts.get(i) ?? []) {
      const call = item as Loose;
      // Only a function call has an output shape that carries a plain text; other kinds stay as they are.
      if (insert.result !== null || call.type !== 'function_call') continue;
      out.push({
        type: 'function_call_result',
        callId: insert.callId,
        name: String(call.name ?? ''),
        status: 'incomplete',
        output: missingOutput,
      } satisfies FunctionCallResultItem);
    }
  });
  return out;
}

/**
 * Events or messages as Agents SDK input items, in log order, as they were stored: a call still waiting for
 * its output (a human approval, a client's tool) comes back as it is.
 */
export function toAgentItems(items: ReadonlyArray<SessionEvent | Message>): Item[] {
  if (!Array.isArray(items)) throw new InvalidArgumentError('items must not be null');
  return items.flatMap(itemsOf);
}

/**
 * What an item says, whatever its bookkeeping (ids, status, provider data, a reasoning id the runner strips
 * from model input): its kind and the neutral message it stands for. Two forms of one item — as stored, as the
 * runner sent it to the model — have the same key.
 */
export function agentItemKey(item: Item): string {
  const loose = item as Loose;
  const kind = 'role' in item ? `message:${String(item.role)}` : String(loose.type);
  return `${kind}:${stableJson(projection(item))}`;
}

/** Every item of `stored`, in order, is among `seen` (in the same order, others may lie between). */
export function itemsCovered(stored: readonly Item[], seen: readonly Item[]): boolean {
  const keys = seen.map(agentItemKey);
  let cursor = 0;
  for (const item of stored) {
    const key = agentItemKey(item);
    while (cursor < keys.length && keys[cursor] !== key) cursor++;
    if (cursor === keys.length) return false;
    cursor++;
  }
  return true;
}
