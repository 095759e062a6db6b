export { DEFAULT_RETRIEVAL_LIMIT, type Retriever, type RetrievalRequest, type RetrievedEvent } from './Retriever.js';
export { Bm25Retriever, DEFAULT_MAX_INDEXED_SESSIONS, type Bm25RetrieverOptions } from './Bm25Retriever.js';
export { RepositoryRetriever, type RepositoryRetrieverOptions } from './RepositoryRetriever.js';
