import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/** What stands in for a tool call's result that was never recorded (the same words as the other providers). */
export const MISSING_TOOL_RESULT = '[no result was recorded for this tool call]';

/** One change made to a prompt so that the API accepts it; the stored log is never changed. */
export interface ToolPairingRepair {
  /** 'orphan-result': a tool result whose call is not right before it, left out; 'missing-result': a call without its result, answered with MISSING_TOOL_RESULT. */
  kind: 'orphan-result' | 'missing-result';
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

/**
 * Makes a Chat Completions message list satisfy the API's tool pairing rules, which reject the whole request
 * otherwise (HTTP 400): every `tool` message answers a call of the assistant message right before its run of
 * tool messages, and every call of an assistant message is answered in that run. A tool result whose call is
 * not there (archived, filtered out, stored by a buggy client) is left out; a call whose result was never
 * recorded (an interrupted turn) gets a result saying so. A list that needs no repair comes back unchanged.
 */
export function pairOpenAIToolMessages(
  messages: readonly ChatCompletionMessageParam[],
  options: PairOpenAIToolMessagesOptions = {},
): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  const missingText = options.missingToolResult ?? MISSING_TOOL_RESULT;
  /** Calls of the assistant message before the current run of tool messages, not answered yet. */
  let open = new Map<string, string | undefined>();
  const close = () => {
    for (const [toolCallId, eventId] of open) {
      options.onRepair?.({ kind: 'missing-result', toolCallId, eventId });
      out.push({ role: 'tool', tool_call_id: toolCallId, content: missingText });
    }
    open = new Map();
  };
  messages.forEach((m, i) => {
    const source = options.sources?.[i];
    if (m.role === 'tool') {
      if (open.has(m.tool_call_id)) {
        open.delete(m.tool_call_id);
        out.push(m);
      } else {
        options.onRepair?.({ kind: 'orphan-result', toolCallId: m.tool_call_id, eventId: source });
      }
      return;
    }
    close();
    out.push(m);
    if (m.role === 'assistant') {
      for (const call of m.tool_calls ?? []) if (!open.has(call.id)) open.set(call.id, source);
    }
  });
  close();
  return out;
}

/** The warning every prompt builder logs for a repair: the stored log keeps the message, the prompt does not. */
export function toolPairingWarning(repair: ToolPairingRepair): [string, Record<string, unknown>] {
  return [
    repair.kind === 'orphan-result'
      ? 'a tool result without its tool call was left out of the prompt'
      : 'a tool call without its result was answered with a placeholder in the prompt',
    { eventId: repair.eventId, toolCallId: repair.toolCallId },
  ];
}
