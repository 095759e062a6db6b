// 'session-compaction/recall': every retriever for SessionMemory's `recall` option and the recall tools —
// in-process BM25, the store's own full-text index, embeddings, and their fusion — and the context assembler.
export { type Retriever, type RetrievalRequest, type RetrievedEvent } from '../recall/Retriever.js';
export { Bm25Retriever, type Bm25RetrieverOptions } from '../recall/Bm25Retriever.js';
export { RepositoryRetriever, type RepositoryRetrieverOptions } from '../recall/RepositoryRetriever.js';
export { EmbeddingRetriever, type EmbeddingRetrieverOptions, type EmbedFunction } from '../recall/EmbeddingRetriever.js';
export { HybridRetriever, type HybridRetrieverOptions } from '../recall/HybridRetriever.js';
export { openAIEmbeddings, type OpenAIEmbeddingsOptions } from '../recall/openAIEmbeddings.js';
export {
  ContextAssembler,
  type ContextAssemblerOptions,
  type AssembleRequest,
  type AssembledContext,
  type ContextTokens,
  type RecallPlacement,
  type RecallSettings,
} from '../recall/ContextAssembler.js';
