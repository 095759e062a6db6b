import { InvalidArgumentError } from '../../errors.js';
import type { AssistantMessage, Message, ToolCall, ToolResponse } from '../../session/Message.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import { isTurnStart } from '../../session/turns.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { requireRequest, type CompactionRequest } from '../CompactionRequest.js';
import type { CompactionResult } from '../CompactionResult.js';
import type { CompactionStrategy } from '../CompactionStrategy.js';
import { stepStarts } from '../cutWithinTurn.js';
import { consumedToolMessages, replaceInPlace } from './replaceInPlace.js';

export type KeepOrStrip = 'keep' | 'strip';

/** 'omit' (on either side) removes the whole call/result pair from the window; both are archived. */
export type ToolPartPolicy = KeepOrStrip | 'omit';

export interface ToolCallPolicy {
  /** The call's arguments. */
  request?: ToolPartPolicy;
  /** The tool's output. */
  response?: ToolPartPolicy;
}

export type ToolStatus = 'success' | 'error';

export interface ContentPolicyCompactionStrategyOptions {
  /**
   * Default 'strip': reasoning is the model's scratch work, its conclusions are in the text. Reasoning costs
   * tokens only when it is sent back (and then counted: an estimator with `countsReasoning`), so an event
   * is not rewritten for its reasoning alone when the estimator does not count it — that would save nothing.
   */
  reasoning?: KeepOrStrip;
  /** Default `{ request: 'keep', response: 'strip' }`: outputs dominate the tokens, arguments say what was done. */
  toolCalls?: ToolCallPolicy;
  /** Per tool name, overriding `toolCalls` field by field (per-tool hints). */
  perTool?: Readonly<Record<string, ToolCallPolicy>>;
  /**
   * The protected tail, never changed: the last N turns (default `{ turns: 1 }`), or the last N steps for
   * single-turn agent runs (a step starts at a user message or at an assistant message with no tool call
   * pending). Unconsumed tool results are never stripped either.
   */
  keepLast?: { turns: number } | { steps: number };
  /** Success or error of a tool response, kept in the stripped marker; default `defaultToolStatus`. */
  toolStatus?: (response: ToolResponse) => ToolStatus;
  tokenCountEstimator?: TokenCountEstimator;
}

/** The `compactionSource` of the copies. */
export const CONTENT_POLICY_SOURCE = 'content-policy';

/**
 * A heuristic status: `<returncode>N</returncode>` (shell tools), a leading "Error"/"Exception"/"Traceback",
 * or a JSON object with an `error` key mean error; anything else success.
 */
export function defaultToolStatus(response: ToolResponse): ToolStatus {
  const data = response.responseData.trimStart();
  const rc = /^<returncode>\s*(-?\d+)\s*<\/returncode>/.exec(data);
  if (rc !== null) return rc[1] === '0' ? 'success' : 'error';
  if (/^(error|exception|traceback)\b/i.test(data)) return 'error';
  if (data.startsWith('{') && /^\{\s*"error"\s*:/.test(data)) return 'error';
  return 'success';
}

/** The status line a stripped response is replaced with: tool name, call id and status stay visible. */
export function strippedResponse(response: ToolResponse, status: ToolStatus): string {
  return `[compacted] ${response.name} (call ${response.id}): ${status}`;
}

/** Replacement arguments of a stripped call: still valid JSON, saying how much was removed. */
export function strippedArguments(call: ToolCall): string {
  return JSON.stringify({ compacted: `${call.arguments.length} characters of arguments stripped` });
}

function requireKeepOrStrip(value: unknown, name: string): KeepOrStrip | undefined {
  if (value === undefined || value === 'keep' || value === 'strip') return value;
  throw new InvalidArgumentError(`${name} must be 'keep' or 'strip'`);
}

function requireToolPart(value: unknown, name: string): ToolPartPolicy | undefined {
  if (value === undefined || value === 'keep' || value === 'strip' || value === 'omit') return value;
  throw new InvalidArgumentError(`${name} must be 'keep', 'strip' or 'omit'`);
}

function requireCount(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new InvalidArgumentError(`${name} must be a non-negative integer`);
  }
  return value;
}

/**
 * Mechanical, per-content-type compaction (strip reasoning, strip tool calls): outside the
 * protected tail, reasoning is removed and tool arguments and/or outputs are replaced by short markers,
 * per tool if wanted. The conversation keeps its shape — every call keeps its name and id and its result,
 * whose marker tells success or error. As with observation masking, each changed event's original is
 * archived and a copy with `maskedFrom` takes its place.
 */
export class ContentPolicyCompactionStrategy implements CompactionStrategy {
  readonly reasoning: KeepOrStrip;
  readonly request: ToolPartPolicy;
  readonly response: ToolPartPolicy;
  readonly perTool: Readonly<Record<string, ToolCallPolicy>>;
  readonly keepLast: { turns: number } | { steps: number };
  readonly tokenCountEstimator: TokenCountEstimator;
  private readonly toolStatus: (response: ToolResponse) => ToolStatus;

  constructor(options: ContentPolicyCompactionStrategyOptions = {}) {
    const opts = options ?? {};
    this.reasoning = requireKeepOrStrip(opts.reasoning, 'reasoning') ?? 'strip';
    this.request = requireToolPart(opts.toolCalls?.request, 'toolCalls.request') ?? 'keep';
    this.response = requireToolPart(opts.toolCalls?.response, 'toolCalls.response') ?? 'strip';
    const perTool: Record<string, ToolCallPolicy> = {};
    for (const [name, policy] of Object.entries(opts.perTool ?? {})) {
      perTool[name] = Object.freeze({
        request: requireToolPart(policy?.request, `perTool.${name}.request`),
        response: requireToolPart(policy?.response, `perTool.${name}.response`),
      });
    }
    this.perTool = Object.freeze(perTool);
    const keepLast = opts.keepLast ?? { turns: 1 };
    if ('steps' in keepLast) this.keepLast = Object.freeze({ steps: requireCount(keepLast.steps, 'keepLast.steps') });
    else if ('turns' in keepLast) this.keepLast = Object.freeze({ turns: requireCount(keepLast.turns, 'keepLast.turns') });
    else throw new InvalidArgumentError('keepLast must be { turns: n } or { steps: n }');
    this.toolStatus = opts.toolStatus ?? defaultToolStatus;
    this.tokenCountEstimator = opts.tokenCountEstimator ?? defaultTokenCountEstimator();
  }

  async compact(request: CompactionRequest): Promise<CompactionResult> {
    const { events } = requireRequest(request);
    const tail = this.tailStart(events);
    const consumed = consumedToolMessages(events);
    const omitted = this.omittedCalls(events, tail, consumed);
    const replacements = new Map<number, Message | null>();
    for (let i = 0; i < tail; i++) {
      const event = events[i]!;
      if (event.isSynthetic() || event.isPinned()) continue;
      const m = event.message;
      const replaced =
        m.type === 'assistant'
          ? this.assistant(m, omitted)
          : m.type === 'tool' && consumed.has(i)
            ? this.tool(m.responses, omitted)
            : undefined;
      if (replaced !== undefined) replacements.set(i, replaced);
    }
    return replaceInPlace(events, replacements, CONTENT_POLICY_SOURCE, this.tokenCountEstimator);
  }

  private policy(tool: string, field: 'request' | 'response'): ToolPartPolicy {
    return this.perTool[tool]?.[field] ?? this[field];
  }

  private omits(tool: string): boolean {
    return this.policy(tool, 'request') === 'omit' || this.policy(tool, 'response') === 'omit';
  }

  /**
   * Call ids whose pair goes: the policy says 'omit', the call and its consumed result are both before the
   * protected tail and neither is pinned, so removing the pair never leaves half of it in the window.
   */
  private omittedCalls(events: readonly SessionEvent[], tail: number, consumed: ReadonlySet<number>): Set<string> {
    const calls = new Set<string>();
    const out = new Set<string>();
    for (let i = 0; i < tail; i++) {
      const e = events[i]!;
      if (e.isSynthetic() || e.isPinned()) continue;
      const m = e.message;
      if (m.type === 'assistant') {
        for (const c of m.toolCalls ?? []) if (this.omits(c.name)) calls.add(c.id);
      } else if (m.type === 'tool' && consumed.has(i)) {
        for (const r of m.responses) if (calls.has(r.id)) out.add(r.id);
      }
    }
    return out;
  }

  /** The replacement, null to remove the event, or undefined to leave it alone. */
  private assistant(m: AssistantMessage, omitted: ReadonlySet<string>): Message | null | undefined {
    let changed = false;
    const copy: AssistantMessage = { type: 'assistant', text: m.text };
    if (m.name !== undefined) copy.name = m.name;
    if (m.reasoning !== undefined) {
      if (this.reasoning === 'keep') copy.reasoning = m.reasoning;
      else if (this.tokenCountEstimator.countsReasoning === true) changed = true;
    }
    if (m.toolCalls !== undefined) {
      const kept = m.toolCalls.filter((c) => !omitted.has(c.id));
      if (kept.length < m.toolCalls.length) changed = true;
      if (kept.length === 0 && (m.text === null || m.text.trim() === '')) return null;
      copy.toolCalls = kept.map((c) => {
        if (this.policy(c.name, 'request') !== 'strip') return c;
        const args = strippedArguments(c);
        if (args.length >= c.arguments.length) return c;
        changed = true;
        return { ...c, arguments: args };
      });
      if (copy.toolCalls.length === 0) delete copy.toolCalls;
    }
    return changed ? copy : undefined;
  }

  private tool(responses: readonly ToolResponse[], omitted: ReadonlySet<string>): Message | null | undefined {
    const kept = responses.filter((r) => !omitted.has(r.id));
    if (kept.length === 0) return null;
    let changed = kept.length < responses.length;
    const out = kept.map((r) => {
      if (this.policy(r.name, 'response') !== 'strip') return r;
      const data = strippedResponse(r, this.toolStatus(r));
      if (data.length >= r.responseData.length) return r;
      changed = true;
      return { ...r, responseData: data };
    });
    return changed ? { type: 'tool', responses: out } : undefined;
  }

  /** Index where the protected tail starts (events.length when nothing is protected). */
  private tailStart(events: readonly SessionEvent[]): number {
    const keep = 'turns' in this.keepLast ? this.keepLast.turns : this.keepLast.steps;
    if (keep === 0) return events.length;
    const starts: number[] = [];
    events.forEach((e, i) => {
      if (isTurnStart(e)) starts.push(i);
    });
    if ('steps' in this.keepLast) {
      starts.push(...stepStarts(events));
      starts.sort((a, b) => a - b);
    }
    return starts.length >= keep ? starts[starts.length - keep]! : 0;
  }
}
