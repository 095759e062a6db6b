import type { ModelMessage, ToolResultPart, UIMessage } from 'ai';
import type { Message } from '../../session/Message.js';
import { SessionEvent } from '../../session/SessionEvent.js';
import { outputText, toModelMessage } from './AiSdkMessages.js';

/** A `useChat` message (AI SDK `UIMessage`), with parts typed loosely so any tool set fits. */
export type UIMessageLike = UIMessage;
type Part = UIMessage['parts'][number];
type AssistantPart = Exclude<Extract<ModelMessage, { role: 'assistant' }>['content'], string>[number];
type UserPart = Exclude<Extract<ModelMessage, { role: 'user' }>['content'], string>[number];

export interface ToUIMessagesOptions {
  /** Summary events (the synthetic pairs a summarising strategy writes); default false — they are not chat. */
  includeSynthetic?: boolean;
  /** System events as `system` UI messages; default false. */
  includeSystem?: boolean;
}

function dataUrl(data: unknown, mediaType: string): string {
  if (data instanceof URL) return data.href;
  if (typeof data === 'string') return /^(https?|data|blob):/.test(data) ? data : `data:${mediaType};base64,${data}`;
  if (data instanceof Uint8Array || data instanceof ArrayBuffer) {
    const bytes = data instanceof ArrayBuffer ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    return `data:${mediaType};base64,${bytes.toString('base64')}`;
  }
  if (data !== null && typeof data === 'object') {
    const file = data as { type?: string; url?: URL | string; data?: unknown; text?: string };
    if (file.type === 'url' && file.url !== undefined) return String(file.url);
    if (file.type === 'data') return dataUrl(file.data, mediaType);
    if (file.type === 'text') return `data:${mediaType};base64,${Buffer.from(file.text ?? '').toString('base64')}`;
  }
  return '';
}

function userParts(message: ModelMessage & { role: 'user' }): Part[] {
  if (typeof message.content === 'string') return [{ type: 'text', text: message.content }];
  return (message.content as UserPart[]).map((p): Part => {
    if (p.type === 'text') return { type: 'text', text: p.text };
    if (p.type === 'image') {
      const mediaType = p.mediaType ?? 'image/*';
      return { type: 'file', mediaType, url: dataUrl(p.image, mediaType) };
    }
    return {
      type: 'file',
      mediaType: p.mediaType,
      url: dataUrl(p.data, p.mediaType),
      ...(p.filename ? { filename: p.filename } : {}),
    };
  });
}

type ToolState = Record<string, unknown> & { toolCallId: string };

/** Folds a tool result into the UI tool part of its call. */
function settle(part: ToolState, result: ToolResultPart): void {
  const output = result.output;
  if (output.type === 'error-text' || output.type === 'error-json') {
    Object.assign(part, { state: 'output-error', errorText: outputText(output) });
  } else if (output.type === 'execution-denied') {
    Object.assign(part, {
      state: 'output-denied',
      approval: { id: '', approved: false, ...(output.reason ? { reason: output.reason } : {}) },
    });
  } else {
    Object.assign(part, { state: 'output-available', output: output.type === 'content' ? output.value : output.value });
  }
}

/**
 * Events as `useChat` UI messages: one per user message, and one per assistant reply holding every step of
 * it (a `step-start` part per model call, reasoning, text, files, and a `tool-<name>` part per tool call with
 * its input and, once recorded, its output or error). Ids are the event ids (an assistant reply takes the id
 * of its first event), so they are stable across reloads. `convertToModelMessages` turns them back into the
 * model messages that were stored.
 */
export function toUIMessages(items: ReadonlyArray<SessionEvent | Message>, options: ToUIMessagesOptions = {}): UIMessageLike[] {
  const out: UIMessageLike[] = [];
  let reply: UIMessageLike | null = null;
  const calls = new Map<string, ToolState>();
  let index = 0;
  for (const item of items) {
    const event = item instanceof SessionEvent ? item : null;
    const id = event?.id ?? `m${index}`;
    index++;
    if (event !== null && event.isSynthetic() && options.includeSynthetic !== true) continue;
    const message = toModelMessage(item);
    switch (message.role) {
      case 'system':
        if (options.includeSystem === true) {
          out.push({ id, role: 'system', parts: [{ type: 'text', text: message.content }] });
          reply = null;
        }
        break;
      case 'user':
        out.push({ id, role: 'user', parts: userParts(message) });
        reply = null;
        break;
      case 'assistant': {
        if (reply === null) {
          reply = { id, role: 'assistant', parts: [] };
          out.push(reply);
        }
        reply.parts.push({ type: 'step-start' });
        const parts: AssistantPart[] =
          typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
        for (const p of parts) {
          if (p.type === 'text') {
            if (p.text !== '') reply.parts.push({ type: 'text', text: p.text, state: 'done' });
          } else if (p.type === 'reasoning') reply.parts.push({ type: 'reasoning', text: p.text, state: 'done' });
          else if (p.type === 'file')
            reply.parts.push({ type: 'file', mediaType: p.mediaType, url: dataUrl(p.data, p.mediaType) });
          else if (p.type === 'tool-call') {
            const part: ToolState = {
              type: `tool-${p.toolName}`,
              toolCallId: p.toolCallId,
              state: 'input-available',
              input: p.input,
              ...(p.providerExecuted ? { providerExecuted: true } : {}),
            };
            calls.set(p.toolCallId, part);
            reply.parts.push(part as Part);
          } else if (p.type === 'tool-result') {
            const call = calls.get(p.toolCallId);
            if (call !== undefined) settle(call, p);
          } else if (p.type === 'tool-approval-request') {
            const call = calls.get(p.toolCallId);
            if (call !== undefined) Object.assign(call, { state: 'approval-requested', approval: { id: p.approvalId } });
          }
        }
        break;
      }
      case 'tool':
        for (const p of message.content) {
          if (p.type === 'tool-result') {
            const call = calls.get(p.toolCallId);
            if (call !== undefined) settle(call, p);
          } else if (p.type === 'tool-approval-response') {
            for (const call of calls.values()) {
              const approval = call.approval as { id?: string } | undefined;
              if (approval?.id !== p.approvalId) continue;
              Object.assign(call, {
                state: 'approval-responded',
                approval: { id: p.approvalId, approved: p.approved, ...(p.reason ? { reason: p.reason } : {}) },
              });
            }
          }
        }
        break;
    }
  }
  return out;
}
