import { InvalidArgumentError, requirePositiveInt } from '../errors.js';
import type { Message } from '../session/Message.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { defaultTokenCountEstimator } from '../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';

export interface SummaryQualityGateOptions {
  /** Length budget of a summary; none by default. */
  maxTokens?: number;
  /** Share of the salient identifiers of the archived events the summary must keep; default 0.5. */
  minIdentifierShare?: number;
  /** How many identifiers are salient: the most frequent ones; default 20. */
  maxIdentifiers?: number;
  /**
   * Texts that mark a refusal or an error instead of a summary. Strings match case-insensitively anywhere in
   * the first 200 characters; RegExps are tested as given (they come from your code, never from users).
   * Default `SummaryQualityGate.DEFAULT_REFUSAL_PATTERNS`; pass `[]` to disable.
   */
  refusalPatterns?: ReadonlyArray<string | RegExp>;
  tokenCountEstimator?: TokenCountEstimator;
}

export interface SummaryQualityVerdict {
  ok: boolean;
  /** Why it failed, one line each; empty when ok. */
  reasons: string[];
  /** Kept share of salient identifiers (1 when the archived events have none). */
  identifierShare: number;
  missingIdentifiers: string[];
}

const HEAD_CHARS = 200;

/**
 * Identifiers worth keeping: paths and file names, ids mixing letters and digits (HAT170, mia_li_3668,
 * UUIDs), dates, numbers of two or more digits, and code names (snake_case, camelCase, dotted.names).
 */
const IDENTIFIER =
  /(?:[\w.-]*\/[\w./-]+)|\b\d{4}-\d{2}-\d{2}\b|\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{3,}\b|\b\d+(?:[.,]\d+)*\b|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[a-z]+[A-Z][A-Za-z0-9]*\b|\b[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)+\b/g;

function messageContents(message: Message): string[] {
  switch (message.type) {
    case 'user':
    case 'system':
      return [message.text];
    case 'assistant':
      return [message.text ?? '', ...(message.toolCalls ?? []).map((c) => c.arguments)];
    case 'tool':
      return message.responses.map((r) => r.responseData);
  }
}

/** Distinct identifiers of `texts`, most frequent first (first occurrence breaks ties). */
export function salientIdentifiers(texts: readonly string[], limit: number): string[] {
  const counts = new Map<string, number>();
  for (const text of texts) {
    for (const match of text.matchAll(IDENTIFIER)) {
      const id = match[0].replace(/[.,/-]+$/, '');
      // One- and two-character tokens ("10", "v2") are too common to say anything.
      if (id.length < 3 && !/^\d{2}$/.test(id)) continue;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  }
  return [...counts.entries()]
    .map(([id, n], order) => ({ id, n, order }))
    .sort((a, b) => b.n - a.n || a.order - b.order)
    .slice(0, limit)
    .map((x) => x.id);
}

/**
 * A check a summary must pass before it replaces the events it covers: not blank, not a refusal or an
 * error text, within its length budget, and keeping a share of the identifiers (numbers, ids, paths, code
 * names) of the archived events — the facts a later turn is most likely to need verbatim. Standalone: a
 * summarising strategy calls `check` and treats a failure like a failed model call.
 */
export class SummaryQualityGate {
  static readonly DEFAULT_MIN_IDENTIFIER_SHARE = 0.5;
  static readonly DEFAULT_MAX_IDENTIFIERS = 20;
  static readonly DEFAULT_REFUSAL_PATTERNS: readonly RegExp[] = Object.freeze([
    /^\s*(?:i'?m sorry|i am sorry|i apologi[sz]e|sorry,)/i,
    /^\s*(?:i can(?:no|')t|i am (?:not able|unable)|i'm (?:not able|unable)|as an ai\b)/i,
    /^\s*(?:error|exception|traceback)\b/i,
    /^\s*\{\s*"error"\s*:/,
    /^\s*(?:rate limit(?:ed)?|internal server error|service unavailable|context length exceeded|maximum context length)\b/i,
  ]);

  readonly maxTokens: number | undefined;
  readonly minIdentifierShare: number;
  readonly maxIdentifiers: number;
  readonly refusalPatterns: ReadonlyArray<string | RegExp>;
  readonly tokenCountEstimator: TokenCountEstimator;

  constructor(options: SummaryQualityGateOptions = {}) {
    const opts = options ?? {};
    this.maxTokens = opts.maxTokens === undefined ? undefined : requirePositiveInt(opts.maxTokens, 'maxTokens');
    const share = opts.minIdentifierShare ?? SummaryQualityGate.DEFAULT_MIN_IDENTIFIER_SHARE;
    if (typeof share !== 'number' || !(share >= 0 && share <= 1)) {
      throw new InvalidArgumentError('minIdentifierShare must be between 0 and 1');
    }
    this.minIdentifierShare = share;
    this.maxIdentifiers = requirePositiveInt(opts.maxIdentifiers ?? SummaryQualityGate.DEFAULT_MAX_IDENTIFIERS, 'maxIdentifiers');
    const patterns = opts.refusalPatterns ?? SummaryQualityGate.DEFAULT_REFUSAL_PATTERNS;
    for (const p of patterns) {
      if (!(p instanceof RegExp) && (typeof p !== 'string' || p.trim() === '')) {
        throw new InvalidArgumentError('refusalPatterns must hold non-empty strings or RegExps');
      }
    }
    this.refusalPatterns = Object.freeze([...patterns]);
    this.tokenCountEstimator = opts.tokenCountEstimator ?? defaultTokenCountEstimator();
  }

  check(summary: string | null | undefined, archivedEvents: readonly SessionEvent[]): SummaryQualityVerdict {
    const text = summary ?? '';
    if (text.trim() === '') return { ok: false, reasons: ['the summary is blank'], identifierShare: 0, missingIdentifiers: [] };
    const reasons: string[] = [];
    const refusal = this.refusal(text);
    if (refusal !== null) reasons.push(`the summary looks like a refusal or an error (matches ${refusal})`);
    if (this.maxTokens !== undefined) {
      const tokens = this.tokenCountEstimator.estimate(text);
      if (tokens > this.maxTokens) reasons.push(`the summary is ${tokens} tokens, over its budget of ${this.maxTokens}`);
    }
    const salient = salientIdentifiers(
      archivedEvents.flatMap((e) => messageContents(e.message)),
      this.maxIdentifiers,
    );
    const lower = text.toLowerCase();
    const missing = salient.filter((id) => !lower.includes(id.toLowerCase()));
    const share = salient.length === 0 ? 1 : (salient.length - missing.length) / salient.length;
    if (share < this.minIdentifierShare) {
      reasons.push(
        `the summary keeps ${salient.length - missing.length} of ${salient.length} identifiers ` +
          `(${Math.round(share * 100)}% < ${Math.round(this.minIdentifierShare * 100)}%); missing: ${missing.slice(0, 10).join(', ')}`,
      );
    }
    return { ok: reasons.length === 0, reasons, identifierShare: share, missingIdentifiers: missing };
  }

  private refusal(text: string): string | null {
    const head = text.slice(0, HEAD_CHARS);
    for (const p of this.refusalPatterns) {
      if (p instanceof RegExp) {
        p.lastIndex = 0;
        if (p.test(head)) return String(p);
      } else if (head.toLowerCase().includes(p.toLowerCase())) {
        return JSON.stringify(p);
      }
    }
    return null;
  }
}
