import type {
  AIMessage,
  AIMessageChunk,
  AIMessageChunkFields,
  BaseMessage,
  StoredMessage,
  ToolCall,
  ToolMessage,
} from '@langchain/core/messages';
import { InvalidArgumentError } from '../../errors.js';
import { Messages, type Message, type ToolCall as LogToolCall } from '../../session/Message.js';
import { participantNameProblem } from '../../validation/inputs.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import type { PersistableMessage } from '../../chat/ChatProvider.js';
import { messageOf, nativeValue, withNative } from '../../chat/nativeMessages.js';
import { planToolPairing, type ToolExchangeMessage } from '../../session/toolCallPairing.js';
import { langchain } from './langchainCore.js';

/** The `format` of LangChain messages kept in event metadata (LangChain's own `StoredMessage` form). */
export const LANGCHAIN_FORMAT = 'langchain';

export const DEFAULT_MISSING_TOOL_MESSAGE = '[no result was recorded for this tool call]';

type Block = Record<string, unknown> & { type?: string };

/** The text of message content: text blocks as they are, a visible marker for the rest. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const block of content as Block[]) {
    let piece: string;
    if (block.type === 'text' || block.type === 'text-plain') piece = String(block.text ?? '');
    else if (block.type === 'reasoning' || block.type === 'thinking') piece = '';
    else if (block.type === 'image_url') {
      const url = typeof block.image_url === 'string' ? block.image_url : (block.image_url as { url?: string } | undefined)?.url;
      piece = `[image: ${url !== undefined && !url.startsWith('data:') ? url : 'inline data'}]`;
    } else if (block.type === 'tool_use' || block.type === 'tool_call' || block.type === 'functionCall') piece = '';
    else piece = `[${String(block.type)}${typeof block.url === 'string' ? `: ${block.url}` : ''}]`;
    if (piece === '') continue;
    out += block.type === 'text' || out === '' ? piece : `\n${piece}`;
  }
  return out;
}

function reasoningOf(message: BaseMessage): string | undefined {
  const pieces: string[] = [];
  if (Array.isArray(message.content)) {
    for (const block of message.content as Block[]) {
      if (block.type === 'reasoning' && typeof block.reasoning === 'string') pieces.push(block.reasoning);
      if (block.type === 'thinking' && typeof block.thinking === 'string') pieces.push(block.thinking);
    }
  }
  const kwarg = message.additional_kwargs?.reasoning_content;
  if (pieces.length === 0 && typeof kwarg === 'string' && kwarg !== '') pieces.push(kwarg);
  return pieces.length === 0 ? undefined : pieces.join('\n\n');
}

export interface FromLangChainOptions {
  /** A ToolMessage without `name`: recovers the tool's name from its call id (e.g. from the history). */
  resolveToolName?: (toolCallId: string) => string | undefined;
}

/**
 * The participant a human or AI message names, when the name is one a message may carry (see
 * `requireParticipantName`); another name stays only in the stored LangChain form, which gives it back exactly.
 */
function participant(message: BaseMessage): { name?: string } {
  const name = message.name;
  return typeof name === 'string' && participantNameProblem(name) === null ? { name } : {};
}

function projection(message: BaseMessage, options: FromLangChainOptions): Message {
  const type = message.getType();
  const text = contentText(message.content);
  switch (type) {
    case 'human':
      return Messages.user(text, participant(message));
    case 'system':
      return Messages.system(text);
    case 'ai': {
      const toolCalls: LogToolCall[] = ((message as AIMessage).tool_calls ?? []).map((c: ToolCall) =>
        Messages.toolCall(c.id ?? '', c.name, JSON.stringify(c.args ?? {})),
      );
      const reasoning = reasoningOf(message);
      return Messages.assistant(text === '' ? null : text, {
        toolCalls,
        ...(reasoning !== undefined ? { reasoning } : {}),
        ...participant(message),
      });
    }
    case 'tool': {
      const tool = message as ToolMessage;
      const name = tool.name ?? options.resolveToolName?.(tool.tool_call_id) ?? '';
      return Messages.tool([Messages.toolResponse(tool.tool_call_id, name, text)]);
    }
    case 'function':
      // The legacy function-calling message: a result keyed by the function's name.
      return Messages.tool([Messages.toolResponse(message.name ?? '', message.name ?? '', text)]);
    case 'generic': {
      const role = (message as unknown as { role?: string }).role;
      if (role === 'system') return Messages.system(text);
      if (role === 'assistant' || role === 'ai') return Messages.assistant(text);
      return Messages.user(text);
    }
    default:
      throw new InvalidArgumentError(`unsupported LangChain message type: ${String(type)}`);
  }
}

/**
 * LangChain's own serialised form (what its persistent histories store), without the `type` a provider's
 * converter may copy into the fields (ChatOpenAI does for a whole response, not for a streamed one): it only
 * repeats the message's own type.
 */
function stored(message: BaseMessage): StoredMessage {
  const dict = message.toDict();
  const data = dict.data as StoredMessage['data'] & { type?: unknown };
  if (data.type !== dict.type) return dict;
  const { type: _type, ...rest } = data;
  return { ...dict, data: rest as StoredMessage['data'] };
}

/** LangChain's serialised form of a streamed reply, marked so that it reads back as the chunk it was. */
type StoredForm = StoredMessage & { chunk?: true };

/**
 * The log entry for one LangChain message: human, AI (text, tool calls, invalid tool calls, reasoning,
 * usage metadata), system, tool (call id, artifact, status), function and generic chat messages. The neutral
 * message kinds are filled in for strategies and search; LangChain's own serialised form is kept in metadata
 * whenever they cannot give the message back exactly. A streamed reply (an `AIMessageChunk`) reads back as
 * the chunk it was, as LangChain's own histories keep it; its neutral message is the reply it stands for, the
 * same as the unstreamed call's, so strategies and search see one reply either way.
 */
export function fromLangChainMessage(message: BaseMessage, options: FromLangChainOptions = {}): PersistableMessage {
  if (message === null || message === undefined || !langchain.messages.isBaseMessage(message)) {
    throw new InvalidArgumentError('message must be a LangChain BaseMessage');
  }
  if (langchain.messages.RemoveMessage.isInstance(message)) {
    throw new InvalidArgumentError('a RemoveMessage is an instruction, not a message; use the history to remove messages');
  }
  const chunk = langchain.messages.AIMessageChunk.isInstance(message);
  const log = projection(chunk ? settled(message) : message, options);
  const form: StoredForm = chunk ? { ...stored(message), chunk: true } : stored(message);
  return withNative(log, LANGCHAIN_FORMAT, form, derivedMessages(log).map(stored));
}

/**
 * A streamed reply (the chunks concatenated, as RunnableWithMessageHistory stores them) as the AIMessage the
 * same call returns unstreamed, so that its neutral message is the same either way: no `tool_call_chunks`, no
 * stream `index` on the raw tool calls, no stream position counters (`prompt`, `completion`) in the response
 * metadata, and `tokenUsage` rebuilt from the provider's `usage` as ChatOpenAI does for a whole response.
 */
function settled(chunk: AIMessageChunk): AIMessage {
  const kwargs = { ...chunk.additional_kwargs };
  if (Array.isArray(kwargs.tool_calls)) {
    kwargs.tool_calls = kwargs.tool_calls.map((call) => {
      if (call === null || typeof call !== 'object' || !('index' in call)) return call;
      const { index: _index, ...rest } = call as typeof call & { index?: unknown };
      return rest as typeof call;
    });
  }
  const { prompt, completion, ...metadata } = chunk.response_metadata ?? {};
  const streamCounters = typeof prompt === 'number' && typeof completion === 'number';
  const responseMetadata: Record<string, unknown> = streamCounters ? metadata : { ...chunk.response_metadata };
  const usage = responseMetadata.usage as Record<string, unknown> | undefined;
  if (
    responseMetadata.tokenUsage === undefined &&
    typeof usage?.prompt_tokens === 'number' &&
    typeof usage.completion_tokens === 'number'
  ) {
    responseMetadata.tokenUsage = {
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      totalTokens: typeof usage.total_tokens === 'number' ? usage.total_tokens : usage.prompt_tokens + usage.completion_tokens,
    };
  }
  return new langchain.messages.AIMessage({
    content: chunk.content,
    additional_kwargs: kwargs,
    response_metadata: responseMetadata,
    tool_calls: chunk.tool_calls ?? [],
    invalid_tool_calls: chunk.invalid_tool_calls ?? [],
    ...(chunk.id !== undefined ? { id: chunk.id } : {}),
    ...(chunk.name !== undefined ? { name: chunk.name } : {}),
    ...(chunk.usage_metadata !== undefined ? { usage_metadata: chunk.usage_metadata } : {}),
  });
}

/** The LangChain messages a Message converts to when there is no stored native form. */
function derivedMessages(message: Message): BaseMessage[] {
  const { AIMessage: AI, HumanMessage, SystemMessage, ToolMessage: Tool } = langchain.messages;
  switch (message.type) {
    case 'user':
      return [
        message.name === undefined
          ? new HumanMessage(message.text)
          : new HumanMessage({ content: message.text, name: message.name }),
      ];
    case 'system':
      return [new SystemMessage(message.text)];
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      const name = message.name === undefined ? {} : { name: message.name };
      if (calls.length === 0)
        return [message.name === undefined ? new AI(message.text ?? '') : new AI({ content: message.text ?? '', ...name })];
      return [
        new AI({
          content: message.text ?? '',
          ...name,
          tool_calls: calls.map((c) => ({ type: 'tool_call' as const, id: c.id, name: c.name, args: parseArgs(c.arguments) })),
        }),
      ];
    }
    case 'tool':
      return message.responses.map(
        (r) => new Tool({ content: r.responseData, tool_call_id: r.id, ...(r.name !== '' ? { name: r.name } : {}) }),
      );
  }
}

function parseArgs(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through: LangChain wants an object
  }
  return { arguments: args };
}

/** The LangChain messages one event stands for. */
export function langChainMessagesOf(item: SessionEvent | Message): BaseMessage[] {
  const native = nativeValue(item, LANGCHAIN_FORMAT) as StoredForm | undefined;
  if (native === undefined) return derivedMessages(messageOf(item));
  if (native.chunk === true) return [new langchain.messages.AIMessageChunk(native.data as AIMessageChunkFields)];
  return [langchain.messages.mapStoredMessageToChatMessage(native)];
}

function exchangeOf(message: BaseMessage): ToolExchangeMessage {
  switch (message.getType()) {
    case 'ai':
      return {
        role: 'assistant',
        calls: ((message as AIMessage).tool_calls ?? []).flatMap((c) => (c.id === undefined ? [] : [c.id])),
      };
    case 'tool':
      return { role: 'tool', results: [(message as ToolMessage).tool_call_id] };
    case 'human':
      return { role: 'user' };
    default:
      return { role: 'other' };
  }
}

/**
 * The prompt side of the library's one pairing rule (`planToolPairing`), for messages about to go to a chat
 * model that insists on pairing: a ToolMessage whose call is not before it (archived, filtered out), or whose
 * call is answered already, is left out; a late one moves up right after its AI message; a call the user moved
 * on from (a newer human message follows it) gets a ToolMessage with `status: 'error'` saying no result was
 * recorded. A call still waiting for its result is left as it is — the ToolMessage a tool loop sends next
 * answers it. `getMessages` never applies it (a history read returns what is stored); apply it yourself to a
 * history that may hold a call the user moved on from. Messages needing no repair pass unchanged.
 */
export function pairToolMessages(messages: readonly BaseMessage[], missingContent = DEFAULT_MISSING_TOOL_MESSAGE): BaseMessage[] {
  const plan = planToolPairing(messages.map(exchangeOf));
  if (plan.unchanged) return [...messages];
  const out: BaseMessage[] = [];
  let open: number | null = null;
  const close = () => {
    if (open === null) return;
    const names = new Map(((messages[open] as AIMessage).tool_calls ?? []).map((c) => [c.id, c.name]));
    for (const insert of plan.inserts.get(open) ?? []) {
      out.push(
        insert.result === null
          ? new langchain.messages.ToolMessage({
              content: missingContent,
              tool_call_id: insert.callId,
              name: names.get(insert.callId) ?? '',
              status: 'error',
            })
          : messages[insert.result.message]!,
      );
    }
    open = null;
  };
  messages.forEach((message, i) => {
    if (message.getType() === 'tool') {
      if (plan.results[i]![0] === 'keep') out.push(message);
      return;
    }
    close();
    out.push(message);
    if (plan.inserts.has(i)) open = i;
  });
  close();
  return out;
}

/**
 * Events or messages as LangChain messages, in log order, as they were stored: a tool call still waiting for
 * its result comes back as it is. To send them to a model, see `pairToolMessages`.
 */
export function toLangChainMessages(items: ReadonlyArray<SessionEvent | Message>): BaseMessage[] {
  if (!Array.isArray(items)) throw new InvalidArgumentError('items must not be null');
  return items.flatMap(langChainMessagesOf);
}
