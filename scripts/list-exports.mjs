// Lists the names an entry point exports (value and type), for reviewing the public surface.
import ts from 'typescript';
const entry = process.argv[2] ?? 'src/index.ts';
const program = ts.createProgram([entry], {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  strict: true,
  experimentalDecorators: true,
  skipLibCheck: true,
});
const checker = program.getTypeChecker();
const sym = checker.getSymbolAtLocation(program.getSourceFile(entry));
const names = checker.getExportsOfModule(sym).map((s) => {
  const t = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
  const isValue = (t.flags & ts.SymbolFlags.Value) !== 0;
  return `${isValue ? 'value' : 'type '} ${s.name}  ${t.declarations?.[0]?.getSourceFile().fileName.replace(process.cwd() + '/', '') ?? ''}`;
});
console.log(names.sort().join('\n'));
console.error(`${names.length} names`);
