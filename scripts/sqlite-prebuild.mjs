// Saves this checkout's compiled better-sqlite3 binary as a local prebuild in <dir>, under the name
// prebuild-install looks for (the package's version, the Node ABI, platform and architecture), unless one is
// there already; prints the file's path.
//
//   node scripts/sqlite-prebuild.mjs <dir>
//   npm_config_better_sqlite3_local_prebuilds=<dir> npm install better-sqlite3   # unpacks it, no compiler
//
// Why: prebuild-install cannot download the official prebuilt binaries where GitHub is unreachable (as on the
// CI machine), and compiling SQLite from source takes about a minute per install. A binary of the same
// better-sqlite3 version and Node ABI is the same binary whichever install compiled it; another version or
// ABI has another name, is not found and compiles as before.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';

const [dirArg] = process.argv.slice(2);
if (dirArg === undefined) {
  process.stderr.write('usage: node scripts/sqlite-prebuild.mjs <dir>\n');
  process.exit(2);
}
const dir = resolve(dirArg);
const require = createRequire(import.meta.url);
const packageDir = dirname(require.resolve('better-sqlite3/package.json'));
const binary = join(packageDir, 'build/Release/better_sqlite3.node');
if (!existsSync(binary)) {
  process.stderr.write(`sqlite-prebuild: no compiled binary at ${binary}\n`);
  process.exit(1);
}
// The name prebuild-install itself derives, from better-sqlite3's own copy of it.
const fromPackage = createRequire(join(packageDir, 'package.json'));
const pkg = fromPackage('./package.json');
const options = { ...fromPackage('prebuild-install/rc')(pkg), pkg };
const file = join(dir, basename(fromPackage('prebuild-install/util').getDownloadUrl(options)));
if (!existsSync(file)) {
  mkdirSync(dir, { recursive: true });
  // Written under a temporary name and renamed: a concurrent install never sees half a file.
  const partial = `${file}.${process.pid}.tmp`;
  try {
    execFileSync('tar', ['-czf', partial, '-C', packageDir, 'build/Release/better_sqlite3.node']);
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
}
process.stdout.write(`${file}\n`);
