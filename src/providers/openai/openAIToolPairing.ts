import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { planToolPairing, type ToolExchangeMessage } from '../../session/toolCallPairing.js';

/** What stands in for a tool call's result that was never recorded (the same words as the other providers). */
export const MISSING_TOOL_RESULT = '[no result was recorded for this tool call]';

/** One change made to a prompt so that the API accepts it; the stored log is never changed. */
export interface ToolPairingRepair {
  /**
   * 'orphan-result': a tool result whose call is not before it (archived, filtered out), left out;
   * 'duplicate-result': a second result for a call answered already, left out (the first one wins);
   * 'moved-result': a result that came late (after other messages), moved right after its call;
   * 'missing-result': a call the user moved on from without its result (a newer user message follows it),
   * answered with MISSING_TOOL_RESULT. A call still waiting for its result is never answered for it.
   */
  kind: 'orphan-result' | 'duplicate-result' | 'moved-result' | 'missing-result';
  toolCallId: string;
  /** The event the message came from, when the caller said (undefined for a request's own message). */
  eventId: string | undefined;
}

export interface PairOpenAIToolMessagesOptions {
  /** Per message of the list, the id of the event it came from (undefined when none). */
  sources?: ReadonlyArray<string | undefined>;
  /** Called once per repair, e.g. to log it. */
  onRepair?: (repair: ToolPairingRepair) => void;
  missingToolResult?: string;
}

function exchangeOf(message: ChatCompletionMessageParam): ToolExchangeMessage {
  switch (message.role) {
    case 'tool':
      return { role: 'tool', results: [message.tool_call_id] };
    case 'assistant':
      return { role: 'assistant', calls: (message.tool_calls ?? []).map((c) => c.id) };
    case 'user':
      return { role: 'user' };
    default:
      return { role: 'other' };
  }
}

/**
 * Makes a Chat Completions message list satisfy the API's tool pairing rules, which reject the whole request
 * otherwise (HTTP 400): every `tool` message answers a call of the assistant message right before its run of
 * tool messages, and every call of an assistant message is answered in that run. It applies the library's
 * one pairing rule (`planToolPairing`): a result without its call before it, or for a call answered already,
 * is left out; a late result moves up to its call; a call the user moved on from (a newer user message follows
 * it) is answered with a placeholder; a call still waiting for its result (the end of the list) is left as it
 * is — its result is yet to come. A list that needs no repair comes back unchanged.
 */
export function pairOpenAIToolMessages(
  messages: readonly ChatCompletionMessageParam[],
  options: PairOpenAIToolMessagesOptions = {},
): ChatCompletionMessageParam[] {
  const plan = planToolPairing(messages.map(exchangeOf));
  if (plan.unchanged) return [...messages];
  const missingText = options.missingToolResult ?? MISSING_TOOL_RESULT;
  const repair = (kind: ToolPairingRepair['kind'], toolCallId: string, at: number) =>
    options.onRepair?.({ kind, toolCallId, eventId: options.sources?.[at] });
  const out: ChatCompletionMessageParam[] = [];
  /** The assistant message whose run of tool messages is being copied, when something goes after that run. */
  let open: number | null = null;
  const close = () => {
    if (open === null) return;
    for (const insert of plan.inserts.get(open) ?? []) {
      if (insert.result === null) {
        repair('missing-result', insert.callId, open);
        out.push({ role: 'tool', tool_call_id: insert.callId, content: missingText });
      } else {
        repair('moved-result', insert.callId, insert.result.message);
        out.push(messages[insert.result.message]!);
      }
    }
    open = null;
  };
  messages.forEach((m, i) => {
    if (m.role === 'tool') {
      const disposition = plan.results[i]![0]!;
      if (disposition === 'keep') out.push(m);
      else if (disposition === 'orphan') repair('orphan-result', m.tool_call_id, i);
      else if (disposition === 'duplicate') repair('duplicate-result', m.tool_call_id, i);
      return;
    }
    close();
    out.push(m);
    if (plan.inserts.has(i)) open = i;
  });
  close();
  return out;
}

/** The warning every prompt builder logs for a repair: the stored log keeps the message, the prompt does not. */
export function toolPairingWarning(repair: ToolPairingRepair): [string, Record<string, unknown>] {
  const what: Record<ToolPairingRepair['kind'], string> = {
    'orphan-result': 'a tool result without its tool call was left out of the prompt',
    'duplicate-result': 'a second tool result for one tool call was left out of the prompt',
    'moved-result': 'a tool result that came late was moved right after its tool call in the prompt',
    'missing-result': 'a tool call the user moved on from was answered with a placeholder in the prompt',
  };
  return [what[repair.kind], { eventId: repair.eventId, toolCallId: repair.toolCallId }];
}
