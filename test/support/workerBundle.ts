/**
 * Child processes of the multi-process tests (crash, lock, torture workers) start from a JavaScript bundle of
 * their TypeScript entry, built once per test process, instead of through `node --import tsx`: tsx's loader
 * costs about 0.8 s of start-up per process on a 2-core machine, and these suites start about a hundred.
 * The bundle is the same code — tsx compiles with esbuild as well — with the packages left as imports.
 *
 *   spawn(process.execPath, [...(await workerBundle(join(here, 'crashWorker.ts'))), ...args])
 */
import { mkdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
// esbuild comes with tsx, which runs every test: no dependency of its own is needed.
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));
/**
 * Inside the project, so that the bundle's package imports resolve from its node_modules; one directory per
 * test process, so that concurrent runs never overwrite each other's bundles.
 */
const outDir = join(root, '.tmp', `test-workers-${process.pid}`);
const bundles = new Map<string, Promise<string>>();

/** Node arguments that run `entry` (an absolute path to a .ts file): the bundle, with source-mapped stacks. */
export async function workerBundle(entry: string): Promise<string[]> {
  let bundle = bundles.get(entry);
  if (bundle === undefined) {
    bundle = bundleOf(entry);
    bundles.set(entry, bundle);
  }
  return ['--enable-source-maps', await bundle];
}

async function bundleOf(entry: string): Promise<string> {
  if (bundles.size === 0) {
    mkdirSync(outDir, { recursive: true });
    process.once('exit', () => rmSync(outDir, { recursive: true, force: true }));
  }
  const outfile = join(outDir, `${bundles.size}-${basename(entry, '.ts')}.mjs`);
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node}`,
    // The library and the workspace packages (the CLI, the bench) are bundled from their sources (the same
    // condition the tests resolve them with); every other package stays an import.
    conditions: ['session-compaction-source'],
    plugins: [
      {
        name: 'external-packages',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) =>
            /^session-compaction(-bench|-cli)?(\/|$)/.test(args.path) ? undefined : { path: args.path, external: true },
          );
        },
      },
    ],
    sourcemap: 'inline',
    // The same compiler options as tsx (the project's tsconfig.json: decorators, target).
    tsconfig: join(root, 'tsconfig.json'),
    logLevel: 'silent',
  });
  return outfile;
}
