import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { InvalidArgumentError } from '../../errors.js';
import type { Message } from '../../session/Message.js';
import { SessionEvent } from '../../session/SessionEvent.js';
import { OPENAI_NATIVE_COMPACTION, nativeCompactionPlan } from '../../compaction/nativeCompaction.js';

/**
 * Events or messages as OpenAI Responses API input items: user, system and assistant messages, function calls
 * (`function_call`) and their outputs (`function_call_output`), in log order. A summary that carries an OpenAI
 * compaction (`NativeCompactionStrategy` with `OpenAIResponsesCompactor`) is sent as the compaction's output
 * items, verbatim — the user messages it kept and its `compaction` item with `encrypted_content` — in place of
 * the summary pair; any other summary as its text.
 */
export function toResponsesInput(items: ReadonlyArray<SessionEvent | Message>): ResponseInputItem[] {
  if (!Array.isArray(items)) throw new InvalidArgumentError('items must not be null');
  const plan = nativeCompactionPlan(items, OPENAI_NATIVE_COMPACTION);
  const out: ResponseInputItem[] = [];
  items.forEach((item, i) => {
    if (plan.has(i)) {
      const payload = plan.get(i);
      if (Array.isArray(payload)) out.push(...(payload as ResponseInputItem[]));
      return;
    }
    out.push(...itemsOfMessage(item instanceof SessionEvent ? item.message : item));
  });
  return out;
}

function itemsOfMessage(message: Message): ResponseInputItem[] {
  switch (message.type) {
    case 'user':
    case 'system':
      return [{ role: message.type, content: message.text }];
    case 'assistant': {
      const items: ResponseInputItem[] = [];
      if (message.text !== null && message.text !== '') items.push({ role: 'assistant', content: message.text });
      for (const call of message.toolCalls ?? []) {
        items.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments });
      }
      return items;
    }
    case 'tool':
      return message.responses.map((r) => ({ type: 'function_call_output', call_id: r.id, output: r.responseData }));
  }
}
