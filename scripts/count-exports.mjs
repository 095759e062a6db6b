// Counts the public names of every entry point in package.json "exports" (from their sources): per subpath,
// summed, and distinct across entries. `--list` prints each `<subpath> <name>` as well.
import { readFileSync } from 'node:fs';
import ts from 'typescript';

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const entries = Object.entries(pkg.exports)
  .filter(([, target]) => typeof target === 'object')
  .map(([subpath, target]) => [subpath, target['session-compaction-source']]);
const program = ts.createProgram(
  entries.map(([, file]) => file),
  {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    experimentalDecorators: true,
    skipLibCheck: true,
    customConditions: ['session-compaction-source'],
  },
);
const checker = program.getTypeChecker();
const distinct = new Set();
const perEntry = {};
let summed = 0;
for (const [subpath, file] of entries) {
  const names = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file))).map((s) => s.name);
  perEntry[subpath] = names.length;
  summed += names.length;
  for (const name of names) {
    distinct.add(name);
    if (process.argv.includes('--list')) console.log(`${subpath} ${name}`);
  }
}
console.log(JSON.stringify(perEntry));
console.log(`${entries.length} entries, ${summed} names summed, ${distinct.size} distinct`);
