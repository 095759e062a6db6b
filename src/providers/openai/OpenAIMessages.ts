import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
} from 'openai/resources/chat/completions';
import { InvalidArgumentError } from '../../errors.js';
import { defaultLogger, type Logger } from '../../logging.js';
import { describeType, invalid, requireParticipantName } from '../../validation/inputs.js';
import { Messages, type Message, type ToolCall } from '../../session/Message.js';
import { interruptedNote, isIncompleteReply } from '../../session/incompleteReplies.js';
import { pairOpenAIToolMessages, toolPairingWarning } from './openAIToolPairing.js';
import { SessionEvent } from '../../session/SessionEvent.js';

export type OpenAIMessageParam = ChatCompletionMessageParam;

export interface ToOpenAIOptions {
  /**
   * Where an assistant message's reasoning goes: 'omit' (default; OpenAI's API takes none back),
   * 'reasoning_content' (DeepSeek and compatible servers) or 'reasoning' (OpenRouter-style). When you send
   * it, count it too: an estimator with `countsReasoning` (e.g. `new TiktokenTokenCountEstimator({
   * countReasoning: true })`).
   */
  reasoning?: 'omit' | 'reasoning_content' | 'reasoning';
  /**
   * Repair tool pairing as the API requires (default true; see `pairOpenAIToolMessages`): a tool result
   * without its call is left out, a late one moves up to its call, a call the user moved on from is answered
   * with a placeholder, each logged at warn with the event id; a call still waiting for its result is left as
   * it is, and the stored log is not changed. Pass false when you append the results of the last calls
   * yourself, and repair the whole list with `pairOpenAIToolMessages`.
   */
  pairToolMessages?: boolean;
  /** Where repairs are logged; default the library's logger. */
  logger?: Logger;
}

const REASONING_FIELDS = ['omit', 'reasoning_content', 'reasoning'] as const;

/**
 * Maps events or messages to OpenAI chat parameters. A tool message carrying several responses becomes
 * one `tool` message per response, because OpenAI ties each tool message to exactly one call id.
 */
export function toOpenAIMessages(
  items: ReadonlyArray<SessionEvent | Message>,
  options: ToOpenAIOptions = {},
): ChatCompletionMessageParam[] {
  const { messages, sources } = toOpenAIMessagesWithSources(items, options);
  if (options?.pairToolMessages === false) return messages;
  const logger = options?.logger ?? defaultLogger();
  return pairOpenAIToolMessages(messages, { sources, onRepair: (r) => logger.warn(...toolPairingWarning(r)) });
}

/** The unrepaired messages, with the id of the event each came from (undefined for a plain Message). */
export function toOpenAIMessagesWithSources(
  items: ReadonlyArray<SessionEvent | Message>,
  options: ToOpenAIOptions = {},
): { messages: ChatCompletionMessageParam[]; sources: (string | undefined)[] } {
  const reasoningField = options?.reasoning ?? 'omit';
  if (!(REASONING_FIELDS as readonly string[]).includes(reasoningField)) {
    throw new InvalidArgumentError("reasoning must be 'omit', 'reasoning_content' or 'reasoning'");
  }
  const out: ChatCompletionMessageParam[] = [];
  const sources: (string | undefined)[] = [];
  for (const item of items) {
    const message = item instanceof SessionEvent ? item.message : item;
    const from = out.length;
    switch (message.type) {
      case 'user':
        out.push({ role: 'user', content: message.text, ...openAIName(message.name) });
        break;
      case 'system':
        out.push({ role: 'system', content: message.text });
        break;
      case 'assistant': {
        const param: ChatCompletionAssistantMessageParam & { reasoning_content?: string; reasoning?: string } = {
          role: 'assistant',
          // A reply that was cut off says so, or the model would take the fragment for its whole answer.
          content:
            item instanceof SessionEvent && isIncompleteReply(item)
              ? [message.text, interruptedNote(item)].filter((t) => t !== null && t !== '').join('\n\n')
              : message.text,
          ...openAIName(message.name),
        };
        if (reasoningField !== 'omit' && message.reasoning !== undefined && message.reasoning !== '') {
          param[reasoningField] = message.reasoning;
        }
        if (message.toolCalls !== undefined && message.toolCalls.length > 0) {
          param.tool_calls = message.toolCalls.map((c) => ({
            id: c.id,
            type: 'function' as const,
            function: { name: c.name, arguments: c.arguments },
          }));
        }
        out.push(param);
        break;
      }
      case 'tool':
        for (const r of message.responses) out.push({ role: 'tool', tool_call_id: r.id, content: r.responseData });
        break;
    }
    for (let i = from; i < out.length; i++) sources.push(item instanceof SessionEvent ? item.id : undefined);
  }
  return { messages: out, sources };
}

/** The longest `name` OpenAI accepts. */
const OPENAI_NAME_MAX = 64;

/**
 * A participant's name as OpenAI takes it, or undefined when nothing of it can be sent. The API accepts
 * `^[a-zA-Z0-9_-]{1,64}$` only (its 400: "Invalid 'messages[1].name': string does not match pattern"), so
 * accents are dropped ("José" → "Jose"), each run of any other character becomes `_` ("Ann Lee" → "Ann_Lee",
 * "Dr. Smith" → "Dr_Smith") and the result is cut to 64 characters. A name with no letter or digit left
 * ("李雷") is not sent: `_` for every such name would make different people one. The stored message keeps the
 * name as it was given.
 */
export function openAIParticipantName(name: string): string | undefined {
  const ascii = name.normalize('NFKD').replace(/\p{M}+/gu, '');
  const sent = ascii.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, OPENAI_NAME_MAX);
  return /[A-Za-z0-9]/.test(sent) ? sent : undefined;
}

function openAIName(name: string | undefined): { name?: string } {
  const sent = name === undefined ? undefined : openAIParticipantName(name);
  return sent === undefined ? {} : { name: sent };
}

/** The `name` of a user or assistant message from a caller, checked as every stored name is. */
function participantName(param: object): { name?: string } {
  const name = (param as { name?: unknown }).name;
  return name === undefined || name === null ? {} : { name: requireParticipantName(name, 'message.name') };
}

type ContentPart = { type: string; text?: string };

function contentText(content: string | ReadonlyArray<ContentPart> | null | undefined): string | null {
  if (content === null || content === undefined) return null;
  if (typeof content === 'string') return content;
  return content
    .filter((p) => p.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('');
}

export interface FromOpenAIOptions {
  /** OpenAI tool messages carry only the call id; this recovers the tool's name (e.g. from history). */
  resolveToolName?: (toolCallId: string) => string | undefined;
}

const OPENAI_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'];

/**
 * Checks one Chat Completions message from any caller (a JSON body relayed by a server): an object with a known
 * role, string (or text-part) content, a string `tool_call_id` on tool messages and well-formed `tool_calls`.
 * Throws InvalidArgumentError naming the field and the type received.
 */
export function validateOpenAIMessage(value: unknown, field = 'message'): ChatCompletionMessageParam {
  if (value === null || value === undefined) throw new InvalidArgumentError(`${field} must not be null`);
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(field, 'an object', value);
  const m = value as Record<string, unknown>;
  if (typeof m.role !== 'string' || !OPENAI_ROLES.includes(m.role)) {
    throw new InvalidArgumentError(
      `${field}.role must be one of ${OPENAI_ROLES.join(', ')} (got ${typeof m.role === 'string' ? `'${m.role}'` : describeType(m.role)})`,
    );
  }
  const content = m.content;
  if (Array.isArray(content)) {
    content.forEach((part: unknown, i) => {
      if (typeof part !== 'object' || part === null || typeof (part as { type?: unknown }).type !== 'string') {
        throw invalid(`${field}.content[${i}]`, 'a content part with a type', part);
      }
      const p = part as { type: string; text?: unknown };
      if (p.type === 'text' && typeof p.text !== 'string') throw invalid(`${field}.content[${i}].text`, 'a string', p.text);
    });
  } else if (content !== null && content !== undefined && typeof content !== 'string') {
    throw invalid(`${field}.content`, 'a string or an array of content parts', content);
  } else if ((content === null || content === undefined) && m.role !== 'assistant') {
    throw invalid(`${field}.content`, 'a string or an array of content parts', content);
  }
  if (m.role === 'tool' && typeof m.tool_call_id !== 'string') throw invalid(`${field}.tool_call_id`, 'a string', m.tool_call_id);
  if (m.role === 'assistant' && m.tool_calls !== undefined && m.tool_calls !== null) {
    if (!Array.isArray(m.tool_calls)) throw invalid(`${field}.tool_calls`, 'an array', m.tool_calls);
    m.tool_calls.forEach((call: unknown, i) => {
      const at = `${field}.tool_calls[${i}]`;
      if (typeof call !== 'object' || call === null) throw invalid(at, 'an object', call);
      const c = call as { id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } };
      if (typeof c.id !== 'string') throw invalid(`${at}.id`, 'a string', c.id);
      if (c.type === 'function' || c.type === undefined) {
        if (typeof c.function !== 'object' || c.function === null) throw invalid(`${at}.function`, 'an object', c.function);
        if (typeof c.function.name !== 'string') throw invalid(`${at}.function.name`, 'a string', c.function.name);
        if (typeof c.function.arguments !== 'string') throw invalid(`${at}.function.arguments`, 'a string', c.function.arguments);
      }
    });
  }
  return value as ChatCompletionMessageParam;
}

/** Maps one OpenAI chat parameter (request message or response message) back to a Message. */
export function fromOpenAIMessage(
  param:
    | ChatCompletionMessageParam
    | { role: 'assistant'; content: string | null; tool_calls?: ChatCompletionMessageToolCall[]; reasoning_content?: string },
  options: FromOpenAIOptions = {},
): Message {
  validateOpenAIMessage(param);
  switch (param.role) {
    case 'user':
      return Messages.user(contentText(param.content as string | ContentPart[]) ?? '', participantName(param));
    case 'system':
    case 'developer':
      return Messages.system(contentText(param.content as string | ContentPart[]) ?? '');
    case 'assistant': {
      const toolCalls: ToolCall[] = (param.tool_calls ?? [])
        .filter((c): c is Extract<ChatCompletionMessageToolCall, { type: 'function' }> => c.type === 'function')
        .map((c) => Messages.toolCall(c.id, c.function.name, c.function.arguments));
      const reasoning = (param as { reasoning_content?: unknown }).reasoning_content;
      return Messages.assistant(contentText(param.content as string | ContentPart[] | null), {
        toolCalls,
        ...(typeof reasoning === 'string' && reasoning !== '' ? { reasoning } : {}),
        ...participantName(param),
      });
    }
    case 'tool':
      return Messages.tool([
        Messages.toolResponse(
          param.tool_call_id,
          options.resolveToolName?.(param.tool_call_id) ?? '',
          contentText(param.content as string | ContentPart[]) ?? '',
        ),
      ]);
    default:
      throw new InvalidArgumentError(`unsupported OpenAI message role: ${String((param as { role?: unknown }).role)}`);
  }
}
