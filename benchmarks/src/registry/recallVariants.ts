import type { ContenderRegistry, StrategyContender } from './ContenderRegistry.js';

/**
 * Every strategy also runs with recall: `<name>-recall` (BM25, offline) and `<name>-recall-hybrid` (BM25
 * fused with embeddings; skipped unless an embedding model is configured). The strategy compacts exactly as
 * without recall; only what is sent differs: the ContextAssembler fits the active window to the budget and
 * quotes what the retriever finds for the request (the probe's question, when a probe is asked).
 */
export function registerRecallVariants(registry: ContenderRegistry): void {
  const strategies = registry.list().filter((c): c is StrategyContender => c.kind === 'strategy' && c.recall === undefined);
  for (const base of strategies) {
    for (const recall of ['bm25', 'hybrid'] as const) {
      registry.register({
        ...base,
        name: recall === 'bm25' ? `${base.name}-recall` : `${base.name}-recall-hybrid`,
        description: `${base.name} with recall (${recall === 'bm25' ? 'BM25' : 'BM25 + embeddings, reciprocal rank fusion'}): prompts built by ContextAssembler`,
        recall,
        // The `recall` option is read by the replay (see recallOptions), the others by the strategy.
        ...(base.options !== undefined ? { options: { ...base.options, recall: 'object' } } : {}),
      });
    }
  }
}
