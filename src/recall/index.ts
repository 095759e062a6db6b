export { DEFAULT_RETRIEVAL_LIMIT, type Retriever, type RetrievalRequest, type RetrievedEvent } from './Retriever.js';
export { Bm25Retriever, DEFAULT_MAX_INDEXED_SESSIONS, type Bm25RetrieverOptions } from './Bm25Retriever.js';
export { RepositoryRetriever, type RepositoryRetrieverOptions } from './RepositoryRetriever.js';
export {
  EmbeddingRetriever,
  DEFAULT_MAX_CACHED_VECTORS,
  type EmbeddingRetrieverOptions,
  type EmbedFunction,
} from './EmbeddingRetriever.js';
export { HybridRetriever, DEFAULT_RRF_K, type HybridRetrieverOptions } from './HybridRetriever.js';
export { openAIEmbeddings, type OpenAIEmbeddingsOptions } from './openAIEmbeddings.js';
export {
  ContextAssembler,
  DEFAULT_RECALL_SHARE,
  DEFAULT_RECALL_NEIGHBORS,
  DEFAULT_RECALL_LIMIT,
  type ContextAssemblerOptions,
  type AssembleRequest,
  type AssembledContext,
  type AssembledParts,
  type ContextTokens,
  type RecallSettings,
  type RecallPlacement,
} from './ContextAssembler.js';
export { instrumentRetriever } from './instrumentRetriever.js';
