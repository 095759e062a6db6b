import { resolve } from 'node:path';
import { IllegalStateError, InvalidArgumentError, requirePositiveInt, requireText } from '../../errors.js';
import { importOptional } from '../../optionalDependency.js';
import type { EmbedFunction } from '../../recall/EmbeddingRetriever.js';
import { cutEmbeddingInput } from '../embeddingInput.js';

/** How a text's token vectors become one vector: their mean (sentence-transformers' usual), the first or the last. */
export type LocalEmbeddingPooling = 'mean' | 'cls' | 'last_token';

/** The weights' precision, which picks the file: onnx/model.onnx (fp32), onnx/model_quantized.onnx (q8), …_fp16, … */
export type LocalEmbeddingDtype = 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'q4f16' | 'bnb4';

/** Options of `localEmbeddings`: where the model is, and how its token vectors become one vector per text. */
export interface LocalEmbeddingsOptions {
  /**
   * The model's directory on disk, as exported for transformers.js (config.json, tokenizer.json,
   * tokenizer_config.json and onnx/model.onnx or a quantised variant). Always read from disk: a relative path is
   * resolved against the working directory and never taken for the name of a model to download.
   */
  modelPath: string;
  /** Default 'mean'; use what the model was trained with (its model card says). */
  pooling?: LocalEmbeddingPooling;
  /** Unit-length vectors; default true. (`EmbeddingRetriever` normalises anyway: this matters to other uses.) */
  normalize?: boolean;
  /** Default 'fp32' (onnx/model.onnx). */
  dtype?: LocalEmbeddingDtype;
  /** The ONNX file's name without suffix or extension, for exports that do not call it 'model'; default 'model'. */
  modelFileName?: string;
  /** Texts per forward pass (padded to the longest of them): bounds the memory one call takes; default 32. */
  batchSize?: number;
  /**
   * Each text is cut to this many characters before tokenising, so one huge tool output costs no more than a
   * long message (the tokenizer truncates to the model's maximum length anyway); default 8,000.
   */
  maxInputChars?: number;
}

/** An `embed` function over a local model, plus `dispose`, which frees the loaded model (the next call loads it again). */
export type LocalEmbedFunction = EmbedFunction & { dispose(): Promise<void> };

const POOLINGS: readonly LocalEmbeddingPooling[] = ['mean', 'cls', 'last_token'];
/** The file-name suffix transformers.js reads for each dtype. */
const DTYPE_SUFFIX: Readonly<Record<LocalEmbeddingDtype, string>> = {
  fp32: '',
  fp16: '_fp16',
  q8: '_quantized',
  int8: '_int8',
  uint8: '_uint8',
  q4: '_q4',
  q4f16: '_q4f16',
  bnb4: '_bnb4',
};
const DEFAULT_BATCH_SIZE = 32;
const DEFAULT_MAX_INPUT_CHARS = 8_000;
const PACKAGE = '@huggingface/transformers';

/** The part of transformers.js used here, typed locally so that this library's types never name the optional package. */
interface TransformersModule {
  pipeline(task: 'feature-extraction', model: string, options: Record<string, unknown>): Promise<FeatureExtractor>;
}
interface FeatureExtractor {
  (texts: string[], options: { pooling: LocalEmbeddingPooling; normalize: boolean }): Promise<OutputTensor>;
  dispose(): Promise<void>;
}
interface OutputTensor {
  dims: number[];
  tolist(): unknown;
}

/**
 * An `embed` function for `EmbeddingRetriever` (and so `HybridRetriever`) over a sentence-embedding model on disk,
 * run in-process by transformers.js (`@huggingface/transformers`, an optional peer dependency, loaded on the first
 * call) on ONNX Runtime's CPU backend: semantic recall without a hosted model and without sending text anywhere.
 * Nothing is downloaded, ever: the model is read from `modelPath` only (`local_files_only`, even where
 * transformers.js's global `env.allowRemoteModels` is on). The model loads once, on first use, shared by
 * concurrent calls; a failed load is not kept, so the next call tries again.
 */
export function localEmbeddings(options: LocalEmbeddingsOptions): LocalEmbedFunction {
  if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
  const modelPath = resolve(requireText(options.modelPath, 'modelPath'));
  const pooling = options.pooling ?? 'mean';
  if (!POOLINGS.includes(pooling)) throw new InvalidArgumentError(`pooling must be one of ${POOLINGS.join(', ')}`);
  const normalize = options.normalize ?? true;
  if (typeof normalize !== 'boolean') throw new InvalidArgumentError('normalize must be a boolean');
  const dtype = options.dtype ?? 'fp32';
  if (!Object.hasOwn(DTYPE_SUFFIX, dtype))
    throw new InvalidArgumentError(`dtype must be one of ${Object.keys(DTYPE_SUFFIX).join(', ')}`);
  const modelFileName = options.modelFileName === undefined ? 'model' : requireText(options.modelFileName, 'modelFileName');
  const batchSize = requirePositiveInt(options.batchSize ?? DEFAULT_BATCH_SIZE, 'batchSize');
  const maxInputChars = requirePositiveInt(options.maxInputChars ?? DEFAULT_MAX_INPUT_CHARS, 'maxInputChars');

  let extractor: Promise<FeatureExtractor> | undefined;
  const load = (): Promise<FeatureExtractor> =>
    (extractor ??= loadExtractor(modelPath, dtype, modelFileName).catch((error: unknown) => {
      extractor = undefined;
      throw error;
    }));

  const embed = async (texts: string[]): Promise<number[][]> => {
    if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) {
      throw new InvalidArgumentError('texts must be an array of strings');
    }
    if (texts.length === 0) return [];
    const run = await load();
    const inputs = texts.map((t) => cutEmbeddingInput(t, maxInputChars));
    // Longest first, so that each forward pass pads its texts to a similar length (as sentence-transformers
    // does): in arrival order, one long turn makes a whole batch of short ones pay for its length.
    const order = inputs.map((_, i) => i).sort((a, b) => inputs[b]!.length - inputs[a]!.length);
    const vectors = new Array<number[]>(texts.length);
    for (let from = 0; from < order.length; from += batchSize) {
      const indices = order.slice(from, from + batchSize);
      const output = await run(
        indices.map((i) => inputs[i]!),
        { pooling, normalize },
      );
      const rows = output.tolist();
      if (output.dims.length !== 2 || !Array.isArray(rows) || rows.length !== indices.length) {
        throw new IllegalStateError(
          `the model in ${modelPath} returned a tensor of shape [${output.dims.join(', ')}] for ${indices.length} texts: ` +
            'a feature-extraction model (last_hidden_state of [batch, tokens, dimensions]) is needed',
        );
      }
      // A text with no token at all (empty, or only characters the tokenizer drops) mean-pools to 0/0: it has no
      // meaning to compare, which the zero vector says (it matches nothing) where NaN would fail the whole call.
      (rows as number[][]).forEach((row, k) => (vectors[indices[k]!] = row.map((x) => (Number.isFinite(x) ? x : 0))));
    }
    return vectors;
  };

  const dispose = async (): Promise<void> => {
    const loading = extractor;
    extractor = undefined;
    const loaded = await loading?.catch(() => undefined);
    await loaded?.dispose();
  };
  return Object.assign(embed, { dispose });
}

async function loadExtractor(modelPath: string, dtype: LocalEmbeddingDtype, modelFileName: string): Promise<FeatureExtractor> {
  const transformers = await importOptional<TransformersModule>(PACKAGE, 'localEmbeddings');
  try {
    return await transformers.pipeline('feature-extraction', modelPath, {
      local_files_only: true,
      dtype,
      model_file_name: modelFileName,
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new IllegalStateError(
      `localEmbeddings could not load the model in ${modelPath} (it reads config.json, tokenizer.json, ` +
        `tokenizer_config.json and onnx/${modelFileName}${DTYPE_SUFFIX[dtype]}.onnx there): ${reason}`,
      { cause: error },
    );
  }
}
