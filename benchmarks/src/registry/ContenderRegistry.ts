import {
  type CompactionStrategy,
  type CompactionTrigger,
  InvalidArgumentError,
  type Logger,
  type Message,
  type ChatClient,
  type TokenCountEstimator,
} from 'session-compaction';
import type { RecordedDataset } from '../recorded/RecordedSession.js';

/** What every contender is built from: the same budget and the same token counter for all. */
export interface ContenderContext {
  /** The context budget in tokens: our triggers fire at it, peers trim to it. */
  budgetTokens: number;
  estimator: TokenCountEstimator;
  /** The summariser (counted); absent when none is configured. */
  chatClient?: ChatClient;
  logger: Logger;
  /**
   * The replay's clock: the time of the call being prepared (recorded time, not wall time). Time-based
   * triggers (idle, cache-aware) read it; absent outside a replay.
   */
  now?: () => Date;
  /** Embeds texts for hybrid recall contenders; absent when no embedding model is configured. */
  embed?: (texts: string[]) => Promise<number[][]>;
}

/** Options from a config file or `--set`, read by the contender (most are passed to the strategy's constructor). */
export type ContenderOptions = Readonly<Record<string, unknown>>;

/** What one option takes: a kind of JSON value, or one of the listed strings. */
export type OptionKind = 'number' | 'boolean' | 'string' | 'object' | 'array' | readonly string[];

/** The options a contender reads, by name; any other key is refused, not ignored. */
export type OptionSpec = Readonly<Record<string, OptionKind>>;

export interface ConfiguredStrategy {
  trigger: CompactionTrigger;
  strategy: CompactionStrategy;
}

/** One message of the replayed history, with its index in the recorded session. */
export interface HistoryItem {
  index: number;
  message: Message;
  tokens: number;
}

/** What a peer sends to the model, and what that costs by the shared counter. */
export interface PeerSelection {
  messages: Message[];
  tokens: number;
  /** Time spent inside the peer library's call only (conversions excluded). */
  libraryMs: number;
}

/**
 * A peer library's stateless context trimmer: given the whole history at each model call it returns what
 * it would send. `prepare` converts a session once; `select` reports the time spent in the library call.
 */
export interface PeerRunner {
  prepare(history: readonly HistoryItem[]): void;
  select(count: number): Promise<PeerSelection>;
}

interface ContenderBase {
  name: string;
  description: string;
  /**
   * The options `create` reads. With it, `checkContenderOptions` refuses a key it does not list (a misspelt key
   * would otherwise be ignored without a word) and a value of the wrong kind; without it, options are not checked.
   */
  options?: OptionSpec;
}

export interface StrategyContender extends ContenderBase {
  kind: 'strategy';
  /** Summarising strategies are skipped (with a note in the report) when no summariser is configured. */
  needsChatClient?: boolean;
  /**
   * Recall contenders: the same strategy, but every prompt is built by a ContextAssembler that quotes what a
   * retriever finds ('bm25': Bm25Retriever; 'hybrid': BM25 fused with embeddings, needs `embed`).
   */
  recall?: 'bm25' | 'hybrid';
  create(context: ContenderContext, options: ContenderOptions): ConfiguredStrategy;
}

export interface PeerContender extends ContenderBase {
  kind: 'peer';
  /** Why the peer does not apply to a dataset (e.g. "no tool calls"), or null when it does. */
  notApplicable?(dataset: RecordedDataset): string | null;
  create(context: ContenderContext, options: ContenderOptions): PeerRunner;
}

export type Contender = StrategyContender | PeerContender;

function kindProblem(kind: OptionKind, value: unknown): string | null {
  if (typeof kind !== 'string') {
    return typeof value === 'string' && kind.includes(value) ? null : `one of ${kind.map((k) => `'${k}'`).join(', ')}`;
  }
  switch (kind) {
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'a number';
    case 'boolean':
      return typeof value === 'boolean' ? null : 'true or false';
    case 'string':
      return typeof value === 'string' ? null : 'a string';
    case 'array':
      return Array.isArray(value) ? null : 'an array';
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value) ? null : 'an object';
  }
}

/**
 * Refuses an option the contender does not read, naming the ones it does, and a value of the wrong kind; the
 * strategy's constructor still checks ranges (with the library's messages).
 */
export function checkContenderOptions(contender: Contender, options: ContenderOptions): void {
  const spec = contender.options;
  if (spec === undefined) return;
  const known = Object.keys(spec);
  for (const [key, value] of Object.entries(options)) {
    const kind = Object.hasOwn(spec, key) ? spec[key] : undefined;
    if (kind === undefined && key === 'recall' && contender.kind === 'strategy' && contender.recall === undefined) {
      throw new InvalidArgumentError(
        `${contender.name}: the recall option needs a recall contender (e.g. '${contender.name}-recall')`,
      );
    }
    if (kind === undefined) {
      throw new InvalidArgumentError(
        `unknown option '${key}' for ${contender.kind} '${contender.name}' ` +
          (known.length === 0 ? '(it takes no options)' : `(known: ${known.join(', ')})`),
      );
    }
    if (value === undefined) continue;
    const expected = kindProblem(kind, value);
    if (expected !== null) {
      throw new InvalidArgumentError(`option '${key}' of '${contender.name}' must be ${expected} (got ${JSON.stringify(value)})`);
    }
  }
}

/**
 * Strategies and peers by name: the CLI and config files refer to them only through this registry, so a
 * new strategy needs one `register` call to take part in every benchmark.
 */
export class ContenderRegistry {
  private readonly contenders = new Map<string, Contender>();
  private readonly unavailable = new Map<string, string>();
  private readonly installHints = new Map<string, string>();

  register(contender: Contender): this {
    if (!/^[a-z0-9][a-z0-9-]*$/.test(contender.name)) {
      throw new InvalidArgumentError(`contender name must be lower-case words joined by '-' (got '${contender.name}')`);
    }
    if (this.contenders.has(contender.name))
      throw new InvalidArgumentError(`contender '${contender.name}' is already registered`);
    this.contenders.set(contender.name, contender);
    return this;
  }

  /**
   * Records a known contender that cannot run here (e.g. its peer library is not installed), with the command
   * that would make it available when there is one.
   */
  markUnavailable(name: string, reason: string, install?: string): this {
    this.unavailable.set(name, reason);
    if (install !== undefined) this.installHints.set(name, install);
    return this;
  }

  /** The command that makes an unavailable contender available, or null. */
  installHint(name: string): string | null {
    return this.installHints.get(name) ?? null;
  }

  /** Why a known contender cannot run here, or null when it can (or is unknown). */
  unavailableReason(name: string): string | null {
    return this.unavailable.get(name) ?? null;
  }

  has(name: string): boolean {
    return this.contenders.has(name);
  }

  get(name: string): Contender {
    const contender = this.contenders.get(name);
    const reason = this.unavailable.get(name);
    if (contender === undefined && reason !== undefined) throw new InvalidArgumentError(`'${name}' is not available: ${reason}`);
    if (contender === undefined) {
      throw new InvalidArgumentError(`unknown strategy or peer '${name}'; known: ${this.names().join(', ')}`);
    }
    return contender;
  }

  names(): string[] {
    return [...this.contenders.keys()];
  }

  list(): Contender[] {
    return [...this.contenders.values()];
  }
}
