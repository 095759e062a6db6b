import { InvalidArgumentError, requirePositiveInt, requireText } from '../errors.js';

/**
 * Context windows (input + output tokens) of common models, as their providers publish them. A dated or
 * suffixed name ("gpt-4o-2024-08-06", "claude-3-5-sonnet-20241022") resolves to its longest listed prefix
 * followed by "-", ":" or "@"; a provider prefix ("openai/gpt-4o") is ignored. Providers change these:
 * extend or override the table with `registerModelContextWindows`, or pass `contextWindowTokens`.
 */
export const BUILT_IN_MODEL_CONTEXT_WINDOWS: Readonly<Record<string, number>> = Object.freeze({
  // OpenAI
  'gpt-5': 400_000,
  'gpt-5-mini': 400_000,
  'gpt-5-nano': 400_000,
  'gpt-4.1': 1_047_576,
  'gpt-4.1-mini': 1_047_576,
  'gpt-4.1-nano': 1_047_576,
  'gpt-4o': 128_000,
  'gpt-4o-mini': 128_000,
  'gpt-4-turbo': 128_000,
  'gpt-4': 8_192,
  'gpt-4-32k': 32_768,
  'gpt-3.5-turbo': 16_385,
  o1: 200_000,
  'o1-mini': 128_000,
  o3: 200_000,
  'o3-mini': 200_000,
  'o4-mini': 200_000,
  // Anthropic
  'claude-opus-4': 200_000,
  'claude-sonnet-4': 200_000,
  'claude-3-7-sonnet': 200_000,
  'claude-3-5-sonnet': 200_000,
  'claude-3-5-haiku': 200_000,
  'claude-3-opus': 200_000,
  'claude-3-haiku': 200_000,
  // Google
  'gemini-2.5-pro': 1_048_576,
  'gemini-2.5-flash': 1_048_576,
  'gemini-2.0-flash': 1_048_576,
  'gemini-1.5-pro': 2_097_152,
  'gemini-1.5-flash': 1_048_576,
  // DeepSeek, Mistral, Meta, Qwen
  'deepseek-chat': 128_000,
  'deepseek-reasoner': 128_000,
  'mistral-large': 131_072,
  'mistral-small': 32_768,
  'llama-3.1': 131_072,
  'llama-3.3': 131_072,
  'qwen2.5': 32_768,
});

const registered = new Map<string, number>();

/** Adds or overrides entries for every lookup in this process (e.g. your fine-tune or a local model). */
export function registerModelContextWindows(windows: Readonly<Record<string, number>>): void {
  if (windows === null || typeof windows !== 'object') throw new InvalidArgumentError('windows must not be null');
  for (const [model, tokens] of Object.entries(windows)) {
    registered.set(normalise(requireText(model, 'model')), requirePositiveInt(tokens, `context window of ${model}`));
  }
}

/** Forgets the registered entries (the built-in table stays). */
export function clearRegisteredModelContextWindows(): void {
  registered.clear();
}

function normalise(model: string): string {
  const slash = model.lastIndexOf('/');
  return (slash >= 0 ? model.slice(slash + 1) : model).trim().toLowerCase();
}

function lookup(name: string, tables: readonly ReadonlyMap<string, number>[]): number | undefined {
  for (const t of tables) {
    const exact = t.get(name);
    if (exact !== undefined) return exact;
  }
  let best: { key: string; tokens: number } | undefined;
  for (const t of tables) {
    for (const [key, tokens] of t) {
      const next = name.charAt(key.length);
      if (
        name.startsWith(key) &&
        (next === '-' || next === ':' || next === '@') &&
        (best === undefined || key.length > best.key.length)
      ) {
        best = { key, tokens };
      }
    }
  }
  return best?.tokens;
}

/**
 * The context window of `model`: from `extra` first, then registered entries, then the built-in table.
 * Unknown → InvalidArgumentError saying how to add it.
 */
export function contextWindowOf(model: string, extra: Readonly<Record<string, number>> = {}): number {
  const name = normalise(requireText(model, 'model'));
  const own = new Map(Object.entries(extra).map(([k, v]) => [normalise(k), v] as const));
  const builtIn = new Map(Object.entries(BUILT_IN_MODEL_CONTEXT_WINDOWS));
  const tokens = lookup(name, [own, registered, builtIn]);
  if (tokens === undefined) {
    throw new InvalidArgumentError(
      `Unknown model "${model}": its context window is not in the table. Pass contextWindowTokens, ` +
        `add it with registerModelContextWindows({ "${name}": <tokens> }), or pass contextWindows: { "${name}": <tokens> }`,
    );
  }
  return tokens;
}
