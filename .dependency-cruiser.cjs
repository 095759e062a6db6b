/**
 * The layering of src/, lowest first. A module may import from its own layer or a lower one, never a higher
 * one; `npm run check:layers` (run by CI) fails on any upward import and on cycles. The tools (cli/src/, the
 * admin CLI, and benchmarks/src/, the benchmark harness) are clients of the library: they import it by its
 * package name only, which resolves to its built entry points (dist/), never to src/.
 */
const LAYERS = [
  ['src/(errors|logging|optionalDependency)\\.ts$', 'src/telemetry/(?!index\\.ts$)', 'src/validation/'],
  ['src/session/'],
  ['src/filter/', 'src/tokens/'],
  ['src/repository/', 'src/lock/'],
  ['src/backends/(?!.*/index\\.ts$)'],
  ['src/summarization/'],
  ['src/compaction/'],
  ['src/service/(?!lifecycle/index\\.ts$)'],
  ['src/recall/(?!index\\.ts$)'],
  ['src/chat/'],
  ['src/providers/(?!.*/index\\.ts$)'],
  // The entries: the root, the SPI and each folder's index.ts (its subpath), and the wiring.
  ['src/config/', 'src/di/', 'src/(index|spi)\\.ts$', 'src/.*/index\\.ts$'],
];

const forbidden = LAYERS.flatMap((paths, level) => {
  const higher = LAYERS.slice(level + 1).flat();
  if (higher.length === 0) return [];
  return paths.map((path) => ({
    name: `layer-${level}-upward`,
    comment: `${path} is in layer ${level}; it must not import from a higher layer`,
    severity: 'error',
    from: { path },
    to: { path: higher.map((p) => `(${p})`).join('|') },
  }));
});

module.exports = {
  forbidden: [
    ...forbidden,
    {
      name: 'library-imports-no-tool',
      comment: 'The library does not know its tools: nothing under src/ imports the CLI or the benchmark harness.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(cli|benchmarks)/' },
    },
    {
      name: 'tool-uses-public-entries',
      comment:
        "A tool imports the library as its users do, by package name ('session-compaction', 'session-compaction/<subpath>'); a relative path into src/ reaches past the public entries.",
      severity: 'error',
      from: { path: '^(cli|benchmarks)/src/' },
      to: { path: '^src/' },
    },
    {
      name: 'cli-uses-bench-by-name',
      comment: "The CLI imports the benchmark harness as 'session-compaction-bench', never by a relative path.",
      severity: 'error',
      from: { path: '^cli/src/' },
      to: { path: '^benchmarks/src/' },
    },
    {
      name: 'bench-imports-no-cli',
      comment: 'The benchmark harness does not depend on the CLI (the CLI depends on it).',
      severity: 'error',
      from: { path: '^benchmarks/src/' },
      to: { path: '^cli/' },
    },
    {
      name: 'no-container-outside-di',
      comment: 'Only src/di/ may depend on inversify or reflect-metadata: the core carries no container decorators.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/di/' },
      to: { path: 'node_modules/(inversify|reflect-metadata)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    // The built entry points the tools resolve to are the edge of the check, not modules to crawl.
    doNotFollow: { path: ['node_modules', '^(cli/|benchmarks/)?dist/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
