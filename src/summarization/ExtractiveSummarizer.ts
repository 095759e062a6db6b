import { InvalidArgumentError, requirePositiveInt } from '../errors.js';
import { defaultTokenCountEstimator } from '../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import type { ChatClient, ChatReply, ChatRequest, ChatUsage, ChatUsageListener } from './ChatClient.js';
import { parseSummaryPrompt } from './prompts.js';
import { SummarizationError } from './SummarizationError.js';

export interface ExtractiveSummarizerOptions {
  /** Budget of the summary when the request sets no `maxTokens`; default 256. */
  maxTokens?: number;
  /** Counts the budget; default the js-tiktoken estimator. */
  tokenCountEstimator?: TokenCountEstimator;
  /** Called after each call with estimated prompt/completion tokens (no model is involved). */
  onUsage?: ChatUsageListener;
}

interface Sentence {
  index: number;
  role: string;
  text: string;
  facts: string[];
  mustKeep: boolean;
  score: number;
}

/** An entry's speaker: a role, a summary label, or a named participant with its role (`Caroline (user)`, see formatEvent). */
const ROLE_LINE =
  /^(User|Assistant|System|Tool|Summary \d+|Earlier summary|[^\n:()[\]<>]{1,64} \((?:user|assistant)\))(?::\s?|\s(?=\[))([\s\S]*)$/;

/** The user's words weigh a little more; a named participant's role follows the name. */
const isUserRole = (role: string) => role === 'User' || role.endsWith(' (user)');

/** The labels a consolidation or a chunked summary puts before each summary it merges (repeated in older, nested ones). */
const SUMMARY_LABEL = /^(?:(?:Summary \d+|Summary of part \d+ of \d+):[ \t]?)+/;

const FACT_PATTERNS: readonly RegExp[] = [
  // ISO and written dates, times
  /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b/g,
  /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?\b/gi,
  /\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/gi,
  // file paths and file names
  /(?:~|\.{1,2})?\/(?:[\w.@-]+\/)*[\w.@-]+/g,
  /\b[A-Za-z]:\\[\w\\.-]+/g,
  /\b[\w-]+\.(?:ts|tsx|js|mjs|cjs|py|java|kt|go|rs|rb|php|cs|cpp|c|h|json|ya?ml|toml|ini|cfg|conf|md|txt|log|sh|sql|csv|xml|html|css|env|lock)\b/g,
  // error names and codes
  /\b[A-Z][A-Za-z]*(?:Error|Exception)\b/g,
  /\bE[A-Z]{3,}\b/g,
  /\b(?:HTTP\s)?[45]\d\d\b(?=\s|$|[.,;:)])/g,
  // numbers, with a unit when present
  /\b\d+(?:[.,]\d+)*(?:\s?(?:%|ms|s|sec|min|h|kb|mb|gb|tb|k|m|px|°c|°f|c|f|usd|eur|tokens?))?\b/gi,
  // names: CamelCase, acronyms, capitalised words inside a sentence
  /\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b/g,
  /\b[A-Z]{2,}[a-z0-9]*\b/g,
  /(?<=[a-z,;:]\s)[A-Z][a-z]+(?:\s[A-Z][a-z]+)*\b/g,
];

const ERROR_WORDS =
  /\b(?:error|exception|fail(?:ed|ure|s|ing)?|fatal|traceback|panic|denied|refused|timed out|timeout|not found|unreachable|not reachable|cannot|can't|crash(?:ed|es)?)\b/i;
const DECISION_WORDS =
  /\b(?:decid\w*|agree[ds]?|chose|chosen|choose|will use|we'll|let's|going with|settled on|prefer\w*|must|should|plan(?:s|ned)? to|switch(?:ed)? to|instead of|resolved|fixed|conclud\w*|always|never)\b/i;
const FILLER =
  /^(?:(?:ok(?:ay)?|thanks?(?: you)?|thank you|you're welcome|sure|good|great|cool|got it|(?:hi|hello|hey)(?: there)?|yes|no)[\s.!,]*)+$/i;
const STOPWORDS = new Set(
  (
    'a an the and or but if then so of to in on at by for with from as is are was were be been being it its this that ' +
    'these those i you he she we they me him her us them my your our their do does did have has had not no yes can could ' +
    'would will shall may might just also very about into over under than there here what which who whom when where why how'
  ).split(' '),
);
const MAX_SENTENCE_CHARS = 400;

/**
 * A ChatClient that needs no model: it reads the transcript section of a summarisation prompt and returns
 * its most informative sentences, attributed to their speaker and in their original order, within a
 * token budget. Sentences holding numbers, dates, names, file paths, error messages or decisions go first;
 * facts from sentences that did not fit are listed on an "Also mentioned:" line. Deterministic.
 *
 * Limits: it only selects and never rewrites, so it cannot resolve pronouns, merge repeated facts, notice
 * that a later message corrected an earlier one, or express what a long tool result meant. Its notion of
 * a "name" is capitalisation. Use a model for quality; use this offline, in tests and in benchmarks.
 */
export class ExtractiveSummarizer implements ChatClient {
  readonly model = 'extractive';
  readonly maxTokens: number;
  readonly tokenCountEstimator: TokenCountEstimator;
  lastUsage: ChatUsage | null = null;
  readonly totalUsage: ChatUsage & { calls: number } = { promptTokens: 0, completionTokens: 0, totalTokens: 0, calls: 0 };
  private readonly onUsage: ChatUsageListener | undefined;

  constructor(options: ExtractiveSummarizerOptions = {}) {
    this.maxTokens = requirePositiveInt(options.maxTokens ?? 256, 'maxTokens');
    this.tokenCountEstimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
    this.onUsage = options.onUsage;
  }

  async call(request: ChatRequest): Promise<string | null> {
    return (await this.complete(request)).text;
  }

  /** The summary with the tokens a model would have read and written for it (estimated: no model runs). */
  async complete(request: ChatRequest): Promise<ChatReply> {
    if (request === null || request === undefined) throw new InvalidArgumentError('request must not be null');
    if (request.signal?.aborted) {
      throw new SummarizationError('extractive summarization was aborted', { kind: 'aborted', cause: request.signal.reason });
    }
    const budget = request.maxTokens ?? this.maxTokens;
    const summary = this.summarize(request.user, budget);
    const promptTokens = this.tokenCountEstimator.estimate(`${request.system ?? ''}\n${request.user}`);
    const completionTokens = summary === null ? 0 : this.tokenCountEstimator.estimate(summary);
    const usage = { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
    this.lastUsage = usage;
    this.totalUsage.promptTokens += promptTokens;
    this.totalUsage.completionTokens += completionTokens;
    this.totalUsage.totalTokens += usage.totalTokens;
    this.totalUsage.calls += 1;
    this.onUsage?.(usage, { model: this.model });
    return { text: summary, usage };
  }

  /** The summary of a prompt (or of plain "Role: text" lines) within `budget` tokens; null when there is nothing to keep. */
  summarize(prompt: string, budget: number): string | null {
    // A transcript of nothing but filler ("ok.", "thanks") still gets a summary: a null would count as a
    // failed summary and block the compaction of that chunk for good.
    let sentences = this.sentences(prompt, false);
    if (sentences.length === 0) sentences = this.sentences(prompt, true);
    if (sentences.length === 0) return null;
    const est = (text: string) => this.tokenCountEstimator.estimate(text);
    const ranked = [...sentences].sort(
      (a, b) => Number(b.mustKeep) - Number(a.mustKeep) || b.score - a.score || a.index - b.index,
    );
    // Keep part of the budget for the facts of sentences that do not fit.
    const sentenceBudget = Math.floor(budget * 0.85);
    const chosen = new Set<Sentence>();
    let used = 0;
    for (const s of ranked) {
      const cost = est(`${s.role}: ${s.text}\n`);
      if (used + cost > sentenceBudget) continue;
      chosen.add(s);
      used += cost;
    }
    const lines = render(sentences.filter((s) => chosen.has(s)));
    used = lines.length === 0 ? 0 : est(lines.join('\n'));

    const seen = new Set<string>(sentences.filter((s) => chosen.has(s)).flatMap((s) => s.facts.map((f) => f.toLowerCase())));
    const leftover: string[] = [];
    for (const s of ranked) {
      if (chosen.has(s)) continue;
      for (const fact of s.facts) {
        const key = fact.toLowerCase();
        if (seen.has(key)) continue;
        seen.add(key);
        leftover.push(fact);
      }
    }
    if (leftover.length > 0) {
      let line = 'Also mentioned:';
      for (const fact of leftover) {
        const next = `${line}${line.endsWith(':') ? ' ' : ', '}${fact}`;
        if (used + est(`\n${next}`) > budget) break;
        line = next;
      }
      if (!line.endsWith(':')) lines.push(line);
    }
    if (lines.length === 0) {
      // Not even one sentence fits: the best one, cut to the budget, beats no summary.
      const best = ranked[0]!;
      let text = `${best.role}: ${best.text}`;
      while (text.length > 1 && est(text) > budget) text = text.slice(0, Math.floor(text.length * 0.8));
      return `${text}…`;
    }
    return lines.join('\n');
  }

  private sentences(prompt: string, keepFiller: boolean): Sentence[] {
    const parsed = parseSummaryPrompt(prompt);
    const entries: Array<{ role: string; text: string }> = [];
    for (const summary of parsed.priorSummaries) {
      for (const line of summary.split('\n')) if (line.trim() !== '') entries.push(splitRole(line, 'Earlier summary'));
    }
    for (const entry of parsed.transcript) {
      const label = SUMMARY_LABEL.exec(entry);
      if (label === null) {
        entries.push(splitRole(entry, 'Note'));
        continue;
      }
      // A summary being merged: its lines keep their own speakers. The label only numbers it in the prompt;
      // copied into the merged summary it would nest ("Summary 1: Summary 1: …") at every later merge.
      for (const line of entry.slice(label[0].length).split('\n')) {
        if (line.trim() !== '') entries.push(splitRole(line.replace(SUMMARY_LABEL, ''), 'Earlier summary'));
      }
    }

    const out: Sentence[] = [];
    const dedupe = new Set<string>();
    let firstUser = true;
    entries.forEach((entry, entryIndex) => {
      for (const raw of splitSentences(entry.text)) {
        const text = raw.length > MAX_SENTENCE_CHARS ? `${raw.slice(0, MAX_SENTENCE_CHARS - 1)}…` : raw;
        const key = text.toLowerCase().replace(/\s+/g, ' ');
        if (dedupe.has(key) || (!keepFiller && FILLER.test(text))) continue;
        dedupe.add(key);
        const facts = extractFacts(text);
        const errorOrDecision = ERROR_WORDS.test(text) || DECISION_WORDS.test(text);
        const words = text.toLowerCase().match(/[a-z0-9][a-z0-9'_-]*/g) ?? [];
        const content = new Set(words.filter((w) => !STOPWORDS.has(w) && w.length > 2));
        let score = 3 * Math.min(facts.length, 4) + (errorOrDecision ? 3 : 0) + content.size / Math.sqrt(words.length + 1);
        if (isUserRole(entry.role)) score += 0.5;
        if (isUserRole(entry.role) && firstUser) score += 2;
        if (text.endsWith('?')) score += 1;
        if (entryIndex === entries.length - 1) score += 1;
        if (words.length < 4 && facts.length === 0) score -= 2;
        out.push({ index: out.length, role: entry.role, text, facts, mustKeep: facts.length > 0 || errorOrDecision, score });
      }
      if (isUserRole(entry.role)) firstUser = false;
    });
    return out;
  }
}

function splitRole(entry: string, fallback: string): { role: string; text: string } {
  const match = ROLE_LINE.exec(entry);
  if (match === null) return { role: fallback, text: entry.trim() };
  let text = match[2]!.trim();
  // "Assistant [tool calls: f(x)]" and "Tool [responses: ...]" read better without the brackets.
  const bracket = /^\[(tool calls|responses): ([\s\S]*)\]$/.exec(text);
  if (bracket !== null) text = `${bracket[1] === 'tool calls' ? 'Called' : 'Returned'} ${bracket[2]}`;
  return { role: match[1]!, text };
}

function splitSentences(text: string): string[] {
  return text
    .split(/\n+|(?<=[.!?])\s+(?=["'([]?[A-Z0-9])/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function extractFacts(text: string): string[] {
  const facts: string[] = [];
  for (const pattern of FACT_PATTERNS) {
    for (const match of text.matchAll(pattern)) {
      const fact = match[0].trim();
      if (fact.length < 2 && !/\d/.test(fact)) continue;
      if (!facts.some((f) => f.includes(fact))) facts.push(fact);
    }
  }
  return facts;
}

/** Consecutive sentences of one speaker share a line. */
function render(sentences: readonly Sentence[]): string[] {
  const lines: string[] = [];
  let role: string | null = null;
  for (const s of sentences) {
    if (s.role === role) lines[lines.length - 1] += ` ${s.text}`;
    else lines.push(`${s.role}: ${s.text}`);
    role = s.role;
  }
  return lines;
}
