import { main } from '../../../cli/src/main.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the command line in this process with captured output. */
export async function runCli(...args: string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const saved = process.exitCode;
  const code = await main(['node', 'session-compaction', ...args], {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    stderrIsTTY: false,
  });
  process.exitCode = saved;
  return { code, stdout, stderr };
}

export function json<T = Record<string, unknown>>(run: CliRun): T {
  return JSON.parse(run.stdout) as T;
}
