import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

/** Every framework an integration adapts; none of them is a dependency of the package. */
const FRAMEWORKS = [
  '@anthropic-ai/sdk',
  'ai',
  '@ai-sdk/provider',
  '@langchain/core',
  '@openai/agents',
  '@openai/agents-core',
  '@huggingface/transformers',
];

/** Every entry point of package.json "exports", as its source file. */
const ENTRIES = Object.values(
  (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { exports: Record<string, string | { import?: string }> }).exports,
)
  .map((target) => (typeof target === 'string' ? undefined : target.import))
  .filter((target): target is string => target !== undefined)
  .map((target) => target.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'));

/** The one entry point that needs its framework at import time. */
const LANGCHAIN = 'src/providers/langchain/index.ts';

interface Outcome {
  entry: string;
  ok: boolean;
  error?: string;
}

/**
 * Imports each module in a fresh Node process in which the frameworks cannot be resolved — a user who
 * installed none of them. Any static import of a framework on the way fails the import.
 */
async function importWithoutFrameworks(modules: readonly string[]): Promise<Outcome[]> {
  const script = `
    const outcomes = [];
    for (const entry of ${JSON.stringify(modules)}) {
      try { await import(entry); outcomes.push({ entry, ok: true }); }
      catch (error) { outcomes.push({ entry, ok: false, error: String(error && error.message) }); }
    }
    process.stdout.write(JSON.stringify(outcomes));`;
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', '--import', './test/support/loader/blockPackages.mjs', '--input-type=module', '-e', script],
    { cwd: root, env: { ...process.env, BLOCKED_PACKAGES: FRAMEWORKS.join(',') }, timeout: 60_000 },
  );
  return JSON.parse(stdout) as Outcome[];
}

describe('framework peers stay optional', function () {
  this.timeout(90_000);

  it('the blocking loader really hides the frameworks (control)', async function () {
    const outcomes = await importWithoutFrameworks(FRAMEWORKS);
    expect(outcomes.every((o) => !o.ok && /Cannot find package/.test(o.error ?? ''))).to.equal(true, JSON.stringify(outcomes));
  });

  it('the root and every other subpath import without any framework installed', async function () {
    expect(ENTRIES).to.include.members([
      'src/index.ts',
      'src/providers/anthropic/index.ts',
      'src/providers/ai-sdk/index.ts',
      'src/providers/openai-agents/index.ts',
      'src/providers/transformers/index.ts',
    ]);
    const outcomes = await importWithoutFrameworks(
      ENTRIES.filter((e) => e !== LANGCHAIN).map((e) => pathToFileURL(`${root}${e}`).href),
    );
    expect(outcomes.filter((o) => !o.ok)).to.deep.equal([]);
  });

  it('the LangChain subpath, which subclasses a LangChain class, names the missing peer in one clear error', async function () {
    expect(ENTRIES).to.include(LANGCHAIN);
    const [outcome] = await importWithoutFrameworks([pathToFileURL(`${root}${LANGCHAIN}`).href]);
    expect(outcome!.ok).to.equal(false);
    expect(outcome!.error).to.equal(
      "session-compaction/langchain needs the optional peer dependency '@langchain/core' (npm install @langchain/core)",
    );
  });

  it('openAIEmbeddings without the openai package names the package to install when it is first called', async function () {
    const script = `
      const { openAIEmbeddings } = await import(${JSON.stringify(pathToFileURL(`${root}src/providers/openai/index.ts`).href)});
      const embed = openAIEmbeddings({ model: 'text-embedding-3-small', apiKey: 'k' });
      await embed(['text']).then(() => process.stdout.write('resolved'), (e) => process.stdout.write(e.name + ': ' + e.message));`;
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', '--import', './test/support/loader/blockPackages.mjs', '--input-type=module', '-e', script],
      { cwd: root, env: { ...process.env, BLOCKED_PACKAGES: 'openai' }, timeout: 60_000 },
    );
    expect(stdout).to.equal(
      "IllegalStateError: openAIEmbeddings needs the optional package 'openai', which is not installed: run npm install openai",
    );
  });

  it('localEmbeddings without transformers.js installed names the package to install when it is first called', async function () {
    const script = `
      const { localEmbeddings } = await import(${JSON.stringify(pathToFileURL(`${root}src/providers/transformers/index.ts`).href)});
      const embed = localEmbeddings({ modelPath: '/nowhere' });
      await embed(['text']).then(() => process.stdout.write('resolved'), (e) => process.stdout.write(e.name + ': ' + e.message));`;
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', '--import', './test/support/loader/blockPackages.mjs', '--input-type=module', '-e', script],
      { cwd: root, env: { ...process.env, BLOCKED_PACKAGES: '@huggingface/transformers' }, timeout: 60_000 },
    );
    expect(stdout).to.equal(
      "IllegalStateError: localEmbeddings needs the optional package '@huggingface/transformers', which is not installed: run npm install @huggingface/transformers",
    );
  });
});
