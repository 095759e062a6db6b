import type {
  AssistantModelMessage,
  ModelMessage,
  SystemModelMessage,
  ToolCallPart,
  ToolModelMessage,
  ToolResultPart,
  UserModelMessage,
} from 'ai';
import { InvalidArgumentError } from '../../errors.js';
import { Messages, type AssistantMessage, type Message, type ToolCall, type ToolMessage } from '../../session/Message.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import type { PersistableMessage } from '../../chat/ChatProvider.js';
import { messageOf, nativeValue, withNative } from '../../chat/nativeMessages.js';
import { planToolPairing, type ToolExchangeMessage } from '../../session/toolCallPairing.js';

/** The `format` of AI SDK messages kept in event metadata. */
export const AI_SDK_FORMAT = 'ai-sdk';

export const DEFAULT_MISSING_TOOL_OUTPUT = '[no result was recorded for this tool call]';

type ToolOutput = ToolResultPart['output'];
type AssistantPart = Exclude<AssistantModelMessage['content'], string>[number];
type UserPart = Exclude<UserModelMessage['content'], string>[number];
type ToolPart = ToolModelMessage['content'][number];

// ---------------------------------------------------------------------------------------------------------
// AI SDK → log

function describeData(data: unknown): string {
  if (data instanceof URL) return data.href;
  if (typeof data === 'string') return data.startsWith('data:') || data.length > 200 ? 'inline data' : data;
  if (data !== null && typeof data === 'object' && !(data instanceof Uint8Array) && !(data instanceof ArrayBuffer)) {
    const file = data as { type?: string; url?: URL | string; text?: string };
    if (file.type === 'url' && file.url !== undefined) return String(file.url);
    if (file.type === 'text') return 'inline text';
    if (file.type === 'reference' || file.type === undefined) return 'provider file';
  }
  return 'inline data';
}

/** A visible marker for a part that is not text, so summaries and search know it was there. */
function marker(part: { type: string } & Record<string, unknown>): string {
  switch (part.type) {
    case 'image':
      return `[image: ${describeData(part.image)}]`;
    case 'file':
      return `[file${typeof part.filename === 'string' ? ` ${part.filename}` : ''} (${String(part.mediaType)}): ${describeData(part.data)}]`;
    case 'reasoning-file':
      return '';
    case 'tool-call':
      return `[provider tool call: ${String(part.toolName)}(${JSON.stringify(part.input ?? {})})]`;
    case 'tool-result':
      return `[provider tool result: ${String(part.toolName)} -> ${outputText(part.output as ToolOutput)}]`;
    case 'tool-approval-request':
      return `[approval requested for tool call ${String(part.toolCallId)}]`;
    case 'custom':
      return `[${String(part.kind)}]`;
    default:
      return `[${part.type}]`;
  }
}

function joinText(pieces: readonly { text: string; isText: boolean }[]): string {
  let out = '';
  for (const { text, isText } of pieces) {
    if (text === '') continue;
    out += isText || out === '' ? text : `\n${text}`;
  }
  return out;
}

/** A tool output as the text the log (and a summariser) sees. */
export function outputText(output: ToolOutput): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value);
    case 'execution-denied':
      return output.reason === undefined ? '[execution denied]' : `[execution denied: ${output.reason}]`;
    case 'content':
      return joinText(
        output.value.map((item) =>
          item.type === 'text'
            ? { text: item.text, isText: true }
            : { text: `[${item.type}${'mediaType' in item && item.mediaType ? ` ${item.mediaType}` : ''}]`, isText: false },
        ),
      );
    default:
      return `[${(output as { type: string }).type}]`;
  }
}

function userMessage(content: UserModelMessage['content']): Message {
  if (typeof content === 'string') return Messages.user(content);
  return Messages.user(
    joinText(
      content.map((p: UserPart) =>
        p.type === 'text' ? { text: p.text, isText: true } : { text: marker(p as never), isText: false },
      ),
    ),
  );
}

function assistantMessage(content: AssistantModelMessage['content']): AssistantMessage {
  if (typeof content === 'string') return Messages.assistant(content);
  const toolCalls: ToolCall[] = [];
  const reasoning: string[] = [];
  const pieces: { text: string; isText: boolean }[] = [];
  for (const part of content as AssistantPart[]) {
    if (part.type === 'text') pieces.push({ text: part.text, isText: true });
    else if (part.type === 'reasoning') reasoning.push(part.text);
    else if (part.type === 'tool-call' && part.providerExecuted !== true) {
      toolCalls.push(Messages.toolCall(part.toolCallId, part.toolName, JSON.stringify(part.input ?? {})));
    } else pieces.push({ text: marker(part as never), isText: false });
  }
  const text = joinText(pieces);
  return Messages.assistant(text === '' ? null : text, {
    toolCalls,
    ...(reasoning.length > 0 ? { reasoning: reasoning.join('\n\n') } : {}),
  });
}

function toolMessage(content: ToolModelMessage['content']): ToolMessage {
  return Messages.tool(
    (content as ToolPart[])
      .filter((p): p is ToolResultPart => p.type === 'tool-result')
      .map((p) => Messages.toolResponse(p.toolCallId, p.toolName, outputText(p.output))),
  );
}

/**
 * The log entry for one AI SDK model message: system, user (text, images, files), assistant (text,
 * reasoning, tool calls, files, provider-executed tools, approval requests) or tool (results, approval
 * responses). The message kinds the strategies understand are filled in; whatever they cannot hold is kept
 * in metadata, so `toModelMessages` gives the message back exactly. Images and files stay what they were:
 * a URL or provider reference is stored as that reference, inline bytes as base64 — never dropped.
 */
export function fromModelMessage(message: ModelMessage): PersistableMessage {
  if (message === null || message === undefined) throw new InvalidArgumentError('message must not be null');
  let projection: Message;
  switch (message.role) {
    case 'system':
      projection = Messages.system(message.content);
      break;
    case 'user':
      projection = userMessage(message.content);
      break;
    case 'assistant':
      projection = assistantMessage(message.content);
      break;
    case 'tool':
      projection = toolMessage(message.content);
      break;
    default:
      throw new InvalidArgumentError(`unsupported AI SDK message role: ${String((message as { role?: unknown }).role)}`);
  }
  return withNative(projection, AI_SDK_FORMAT, message, derivedMessage(projection));
}

export function fromModelMessages(messages: readonly ModelMessage[]): PersistableMessage[] {
  if (!Array.isArray(messages)) throw new InvalidArgumentError('messages must not be null');
  return messages.map(fromModelMessage);
}

// ---------------------------------------------------------------------------------------------------------
// log → AI SDK

function toolInput(args: string): unknown {
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}

/** The model message a Message converts to when there is no stored native form. */
function derivedMessage(message: Message): ModelMessage {
  switch (message.type) {
    case 'system':
      return { role: 'system', content: message.text };
    case 'user':
      return { role: 'user', content: message.text };
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0 && message.reasoning === undefined) return { role: 'assistant', content: message.text ?? '' };
      const parts: AssistantPart[] = [];
      if (message.reasoning !== undefined) parts.push({ type: 'reasoning', text: message.reasoning });
      if (message.text !== null && message.text !== '') parts.push({ type: 'text', text: message.text });
      for (const c of calls) parts.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: toolInput(c.arguments) });
      return { role: 'assistant', content: parts };
    }
    case 'tool':
      return {
        role: 'tool',
        content: message.responses.map((r): ToolResultPart => ({
          type: 'tool-result',
          toolCallId: r.id,
          toolName: r.name,
          output: { type: 'text', value: r.responseData },
        })),
      };
  }
}

/** One event or message as an AI SDK model message: its stored native form when it still applies, else converted. */
export function toModelMessage(item: SessionEvent | Message): ModelMessage {
  const native = nativeValue(item, AI_SDK_FORMAT);
  return native === undefined ? derivedMessage(messageOf(item)) : (native as ModelMessage);
}

export interface PairToolResultsOptions {
  /** Output of the `error-text` result a prompt gets for a call the user moved on from. */
  missingToolOutput?: string;
}

export interface ModelPrompt {
  /** The system messages, in order (pass as `instructions`); absent when there are none. */
  instructions?: SystemModelMessage[];
  /** Every other message, in order. */
  messages: ModelMessage[];
}

const calledTools = (m: ModelMessage): ToolCallPart[] =>
  m.role === 'assistant' && typeof m.content !== 'string'
    ? (m.content as AssistantPart[]).filter((p): p is ToolCallPart => p.type === 'tool-call' && p.providerExecuted !== true)
    : [];

const resultParts = (m: ModelMessage): ToolResultPart[] =>
  m.role === 'tool' ? (m.content as ToolPart[]).filter((p): p is ToolResultPart => p.type === 'tool-result') : [];

function exchangeOf(message: ModelMessage): ToolExchangeMessage {
  switch (message.role) {
    case 'assistant':
      return { role: 'assistant', calls: calledTools(message).map((c) => c.toolCallId) };
    case 'tool':
      return { role: 'tool', results: resultParts(message).map((r) => r.toolCallId) };
    case 'user':
      return { role: 'user' };
    default:
      return { role: 'other' };
  }
}

/**
 * The prompt side of the library's one pairing rule (`planToolPairing`), for messages about to go to a
 * model: every result answers a call of the assistant message before its run of tool messages, as the AI SDK
 * checks and providers require. A result whose call is not before it (archived, filtered out), or whose call
 * is answered already, is left out; a late result (a client-side tool's, sent after other messages) moves
 * up to its call; a call the user moved on from (a newer user message follows it) gets an `error-text`
 * result saying no result was recorded. A call still waiting for its result — a client-side tool's, one
 * awaiting a tool approval, which the SDK executes once approved — is left as it is, and provider-executed
 * calls are never answered. Messages that need no repair are passed through as they are.
 */
export function pairToolResults(messages: readonly ModelMessage[], options: PairToolResultsOptions = {}): ModelMessage[] {
  const plan = planToolPairing(messages.map(exchangeOf));
  if (plan.unchanged) return [...messages];
  const missingOutput = options.missingToolOutput ?? DEFAULT_MISSING_TOOL_OUTPUT;
  const out: ModelMessage[] = [];
  let open: number | null = null;
  const close = () => {
    if (open === null) return;
    const names = new Map(calledTools(messages[open]!).map((c) => [c.toolCallId, c.toolName]));
    const content = (plan.inserts.get(open) ?? []).map((insert): ToolResultPart =>
      insert.result === null
        ? {
            type: 'tool-result',
            toolCallId: insert.callId,
            toolName: names.get(insert.callId) ?? '',
            output: { type: 'error-text', value: missingOutput },
          }
        : resultParts(messages[insert.result.message]!)[insert.result.index]!,
    );
    out.push({ role: 'tool', content });
    open = null;
  };
  messages.forEach((message, i) => {
    if (message.role !== 'tool') {
      close();
      out.push(message);
      if (plan.inserts.has(i)) open = i;
      return;
    }
    const dispositions = plan.results[i]!;
    let k = 0;
    const parts = message.content as ToolPart[];
    const kept = parts.filter((p) => p.type !== 'tool-result' || dispositions[k++] === 'keep');
    if (kept.length === parts.length) out.push(message);
    else if (kept.length > 0) out.push({ ...message, content: kept });
  });
  close();
  return out;
}

/**
 * Maps events or messages to `{ instructions, messages }`: system messages separated as `instructions` (AI SDK
 * 7 refuses them inside `messages` unless `allowSystemInMessages` is set), everything else in log order, as it
 * was stored — a tool call still waiting for its result comes back as it is. Events written by this
 * integration come back exactly as they were stored. To send messages that may hold unpaired tool calls to a
 * model, pass them through `pairToolResults` (every turn of `AiSdkSessionMemory` does).
 */
export function toModelMessages(items: ReadonlyArray<SessionEvent | Message>): ModelPrompt {
  if (!Array.isArray(items)) throw new InvalidArgumentError('items must not be null');
  const instructions: SystemModelMessage[] = [];
  const messages: ModelMessage[] = [];
  for (const item of items) {
    const message = toModelMessage(item);
    if (message.role === 'system') instructions.push(message);
    else messages.push(message);
  }
  return instructions.length === 0 ? { messages } : { instructions, messages };
}
