import type { Message } from './Message.js';
import { SessionEvent } from './SessionEvent.js';
import { isTurnStart } from './turns.js';

/**
 * Where a tool call stands in a conversation:
 * - 'answered': a result for it comes later (right after it, or later still: a late result);
 * - 'pending': no result yet and no new user message after it. The result may still come — a client-side
 *   tool, a human approval, the next request of a tool loop — so the call is read back and sent as it is;
 * - 'abandoned': no result, and a new user message follows it. The user moved on; a provider that insists on
 *   a result for every call gets a placeholder in the prompt (never in the log, never on a history read).
 */
export type ToolCallState = 'answered' | 'pending' | 'abandoned';

/**
 * One message of a conversation as the pairing rule sees it, whatever the provider's own shape.
 * - 'user': a user's own message (text, images...): every call still unanswered before it is abandoned. A user
 *   message may also carry results first (Anthropic puts `tool_result` blocks in the next user message);
 * - 'tool': a message that only carries results;
 * - 'assistant': the model's message, with the calls it makes the client answer (provider-executed calls,
 *   answered by the provider itself, are not listed);
 * - 'other': anything else (a system message, a sub-agent's message): it neither answers nor abandons.
 */
export interface ToolExchangeMessage {
  /** What the message is to the rule (see above). */
  role: 'user' | 'assistant' | 'tool' | 'other';
  /** Ids of the calls this message makes, in order. */
  calls?: readonly string[];
  /** Ids of the results this message carries, in order. */
  results?: readonly string[];
}

/**
 * What happens to one result of a prompt: 'keep' (it answers its call where it is), 'move' (a late result:
 * it goes right after its call, see `inserts`), 'orphan' (no call before it: archived, filtered out, never
 * made — left out) or 'duplicate' (its call is answered already: left out, the first result wins).
 */
export type ResultDisposition = 'keep' | 'move' | 'orphan' | 'duplicate';

/** What goes right after a call's message: a moved late result (its position), or a placeholder (`result: null`). */
export interface ToolPairingInsert {
  /** The call the insert answers. */
  callId: string;
  /** Where the late result is (message index, index among that message's results); null for a placeholder. */
  result: { message: number; index: number } | null;
}

/** What a prompt renderer does to make a message list satisfy the pairing rule (see `planToolPairing`). */
export interface ToolPairingPlan {
  /** Every call, in order: its id, the index of the message making it, its state and the message answering it. */
  readonly calls: ReadonlyArray<{
    readonly id: string;
    readonly at: number;
    readonly state: ToolCallState;
    readonly answeredAt: number | null;
  }>;
  /** The state of every call, by id (a reused id: its latest call). */
  readonly states: ReadonlyMap<string, ToolCallState>;
  /** `results[m][k]`: the disposition of the k-th result of message m. */
  readonly results: ReadonlyArray<readonly ResultDisposition[]>;
  /**
   * By the index of a message that makes calls: what to add after the results that follow it (before the next
   * assistant or user message), in call order — late results moved up, then placeholders for abandoned calls.
   */
  readonly inserts: ReadonlyMap<number, readonly ToolPairingInsert[]>;
  /** Nothing moves, nothing is left out, nothing is added: the prompt goes as it is. */
  readonly unchanged: boolean;
}

interface CallEntry {
  id: string;
  at: number;
  result: { message: number; index: number; inPlace: boolean } | null;
}

/** How a provider places a call's result. */
export interface ToolPairingOptions {
  /**
   * Where a result answers its call in place: 'next-messages' (default) in the run of result-carrying
   * messages right after it, as Chat Completions, the Messages API and the AI SDK require; 'after-call'
   * anywhere after it, as the Responses API takes a call's output.
   */
  placement?: 'next-messages' | 'after-call';
}

/**
 * The one pairing rule every integration applies to a prompt before it goes to a provider: each result
 * answers the latest call with its id made before it; a result in the run of result-carrying messages right
 * after its call stays, a later one moves up to it (a late real result always reaches the model, and it is
 * the result the model sees — never a placeholder beside it); a result without a call before it, or for a call
 * answered already, is left out; a pending call stays as it is; only an abandoned call gets a placeholder.
 * History reads never apply it: they return what is stored.
 */
export function planToolPairing(messages: readonly ToolExchangeMessage[], options: ToolPairingOptions = {}): ToolPairingPlan {
  const anywhere = options.placement === 'after-call';
  let lastUser = -1;
  messages.forEach((m, i) => {
    if (m.role === 'user') lastUser = i;
  });
  const calls: CallEntry[] = [];
  const latest = new Map<string, CallEntry>();
  const results: ResultDisposition[][] = [];
  let unchanged = true;
  messages.forEach((m, i) => {
    const dispositions: ResultDisposition[] = [];
    (m.results ?? []).forEach((id, k) => {
      const call = latest.get(id);
      if (call === undefined) dispositions.push('orphan');
      else if (call.result !== null) dispositions.push('duplicate');
      else {
        const inPlace = anywhere ? call.at < i : isInPlace(messages, call.at, i);
        call.result = { message: i, index: k, inPlace };
        dispositions.push(inPlace ? 'keep' : 'move');
      }
      if (dispositions[k] !== 'keep') unchanged = false;
    });
    results.push(dispositions);
    for (const id of m.calls ?? []) {
      const entry: CallEntry = { id, at: i, result: null };
      calls.push(entry);
      latest.set(id, entry);
    }
  });
  const states = new Map<string, ToolCallState>();
  const inserts = new Map<number, ToolPairingInsert[]>();
  const summary: Array<{ id: string; at: number; state: ToolCallState; answeredAt: number | null }> = [];
  for (const call of calls) {
    const state: ToolCallState = call.result !== null ? 'answered' : lastUser > call.at ? 'abandoned' : 'pending';
    states.set(call.id, state);
    summary.push({ id: call.id, at: call.at, state, answeredAt: call.result?.message ?? null });
    let insert: ToolPairingInsert | null = null;
    if (call.result !== null && !call.result.inPlace) {
      insert = { callId: call.id, result: { message: call.result.message, index: call.result.index } };
    } else if (state === 'abandoned') insert = { callId: call.id, result: null };
    if (insert === null) continue;
    unchanged = false;
    const list = inserts.get(call.at) ?? [];
    list.push(insert);
    inserts.set(call.at, list);
  }
  // Moved results first, then placeholders: a reader of the prompt sees real results before stand-ins.
  for (const list of inserts.values()) list.sort((a, b) => Number(a.result === null) - Number(b.result === null));
  return { calls: summary, states, results, inserts, unchanged };
}

/** A result at `at` answers a call at `call` in place when only result-carrying messages lie between them. */
function isInPlace(messages: readonly ToolExchangeMessage[], call: number, at: number): boolean {
  if (at <= call) return false;
  for (let j = call + 1; j < at; j++) if (messages[j]!.role !== 'tool') return false;
  const role = messages[at]!.role;
  return role === 'tool' || (role === 'user' && at === call + 1);
}

/**
 * A log entry as the pairing rule sees it. Only a turn start (a root, non-synthetic user event) is a user's
 * new message: a sub-agent's user event or the prompt that opens a summary abandons nothing.
 */
export function toolExchangeOf(item: SessionEvent | Message): ToolExchangeMessage {
  const message = item instanceof SessionEvent ? item.message : item;
  switch (message.type) {
    case 'assistant':
      return { role: 'assistant', calls: (message.toolCalls ?? []).map((c) => c.id) };
    case 'tool':
      return { role: 'tool', results: message.responses.map((r) => r.id) };
    case 'user':
      return { role: item instanceof SessionEvent && !isTurnStart(item) ? 'other' : 'user' };
    default:
      return { role: 'other' };
  }
}

/** The state of every tool call in a log or message list, by call id. */
export function toolCallStates(items: ReadonlyArray<SessionEvent | Message>): ReadonlyMap<string, ToolCallState> {
  return planToolPairing(items.map(toolExchangeOf)).states;
}

/**
 * The index of the first entry that makes a pending call (no result yet, no new user message after it), or
 * -1. Compaction never cuts past it: archiving the call would leave its result, when it comes, without it.
 */
export function firstPendingCall(items: ReadonlyArray<SessionEvent | Message>): number {
  const pending = planToolPairing(items.map(toolExchangeOf)).calls.find((c) => c.state === 'pending');
  return pending === undefined ? -1 : pending.at;
}
