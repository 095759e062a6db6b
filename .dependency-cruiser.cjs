/**
 * The layering of src/, lowest first. A module may import from its own layer or a lower one, never a higher
 * one; `npm run check:layers` (run by CI) fails on any upward import and on cycles.
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
  ['src/config/', 'src/di/', 'src/bench/', 'src/cli/', 'src/(index|spi)\\.ts$', 'src/.*/index\\.ts$'],
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
      name: 'no-container-outside-di',
      comment: 'Only src/di/ may depend on inversify or reflect-metadata: the core carries no container decorators.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(di|bench|cli)/' },
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
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
