// Run by test/bench/benchmarkScripts.test.ts in a child process: imports each benchmark script named on the command
// line as `node <script> --help` would run it, with process.exit and stdout captured, and prints one JSON line per
// script on the real stdout. One process for all of them (the library and the drivers load once), and a child, so
// that a script ignoring --help runs away under the test's timeout instead of inside the test process.
import { pathToFileURL } from 'node:url';

class Exited extends Error {
  constructor(readonly code: number | undefined) {
    super(`process.exit(${String(code)})`);
  }
}

const write = process.stdout.write.bind(process.stdout);
const exit = process.exit.bind(process);
const scripts = process.argv.slice(2);

for (const file of scripts) {
  let printed = '';
  process.argv = [process.argv[0]!, file, '--help'];
  process.exit = ((code?: number) => {
    throw new Exited(code);
  }) as typeof process.exit;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    printed += String(chunk);
    return true;
  }) as typeof process.stdout.write;
  let outcome: { exitCode?: number | undefined; error?: string };
  try {
    await import(pathToFileURL(file).href);
    outcome = { error: 'ran to the end without exiting' };
  } catch (error) {
    outcome = error instanceof Exited ? { exitCode: error.code ?? 0 } : { error: String(error) };
  } finally {
    process.stdout.write = write;
    process.exit = exit;
  }
  write(`${JSON.stringify({ file, printed, ...outcome })}\n`);
}
exit(0);
