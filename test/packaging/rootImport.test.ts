import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const OPTIONAL = [
  'better-sqlite3',
  'pg',
  'ioredis',
  'openai',
  '@huggingface/transformers',
  'onnxruntime-node',
  'winston',
  'zod',
  'yaml',
];

/** Every module URL (ESM) and file (CommonJS) that a fresh Node process loads while running `script`. */
function loadedModules(script: string): string[] {
  const out = execFileSync(
    process.execPath,
    ['--import', './test/support/recordImports.mjs', '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: root, encoding: 'utf8' },
  );
  const line = out.split('\n').find((l) => l.startsWith('@@IMPORTS@@'));
  if (line === undefined) throw new Error(`no import record in output: ${out}`);
  return JSON.parse(line.slice('@@IMPORTS@@'.length)) as string[];
}

const packagesIn = (modules: string[]): Set<string> =>
  new Set(
    modules.flatMap((m) => {
      const match = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(m);
      return match?.[1] !== undefined ? [match[1]] : [];
    }),
  );

describe('package root import', function () {
  this.timeout(60_000);

  it('loads none of the database drivers, the OpenAI SDK, transformers.js, winston, zod or yaml', function () {
    const loaded = packagesIn(loadedModules("await import('./src/index.ts');"));
    expect(loaded.has('inversify'), 'the recorder sees node_modules packages').to.equal(true);
    for (const name of OPTIONAL) expect(loaded.has(name), name).to.equal(false);
  });

  it('loads zod and yaml only when a configuration is read', function () {
    const loaded = packagesIn(
      loadedModules("const { ResolvedConfiguration } = await import('./src/index.ts'); new ResolvedConfiguration({});"),
    );
    expect(loaded.has('zod'), 'zod').to.equal(true);
  });

  it('loads a driver only when its repository is constructed', function () {
    const loaded = packagesIn(
      loadedModules(
        "const { SqliteSessionRepository } = await import('./src/index.ts'); await new SqliteSessionRepository({ path: ':memory:' }).close();",
      ),
    );
    expect(loaded.has('better-sqlite3')).to.equal(true);
    for (const name of ['pg', 'ioredis', 'openai']) expect(loaded.has(name), name).to.equal(false);
  });
});
