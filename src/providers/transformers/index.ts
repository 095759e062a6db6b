// 'session-compaction/transformers': embeddings from a model on disk, run in-process by transformers.js.
export {
  localEmbeddings,
  type LocalEmbeddingsOptions,
  type LocalEmbedFunction,
  type LocalEmbeddingPooling,
  type LocalEmbeddingDtype,
} from './localEmbeddings.js';
