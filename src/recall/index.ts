// 'session-compaction/recall': every retriever for SessionMemory's `recall` option and the recall tools —
// in-process BM25, the store's own full-text index, embeddings, and their fusion — and the context assembler.
export {
  type Retriever,
  type RetrievalRequest,
  type RetrievedEvent,
  type RetrievedWithNeighbours,
  type PreparedRetrieval,
} from './Retriever.js';
export { Bm25Retriever, type Bm25RetrieverOptions } from './Bm25Retriever.js';
export { RepositoryRetriever, type RepositoryRetrieverOptions } from './RepositoryRetriever.js';
export { EmbeddingRetriever, type EmbeddingRetrieverOptions, type EmbedFunction } from './EmbeddingRetriever.js';
export { HybridRetriever, type HybridRetrieverOptions } from './HybridRetriever.js';
export { openAIEmbeddings, type OpenAIEmbeddingsOptions } from '../providers/openai/openAIEmbeddings.js';
export {
  localEmbeddings,
  type LocalEmbeddingsOptions,
  type LocalEmbedFunction,
  type LocalEmbeddingPooling,
  type LocalEmbeddingDtype,
} from '../providers/transformers/localEmbeddings.js';
export {
  ContextAssembler,
  type ContextAssemblerOptions,
  type AssembleRequest,
  type AssembledContext,
  type ContextTokens,
  type RecallPlacement,
  type RecallSettings,
} from './ContextAssembler.js';
export { RECALL_BLOCK_HEADER } from './recallBlock.js';
