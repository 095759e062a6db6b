import { Presets, SingleBar } from 'cli-progress';

/** Where the command line writes: the process's streams, or a capture in tests. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Progress bars are drawn only on a terminal. */
  stderrIsTTY: boolean;
}

export const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  get stderrIsTTY() {
    return process.stderr.isTTY === true;
  },
};

export interface ProgressReporter {
  start(total: number, phase: string): void;
  tick(label: string): void;
  stop(): void;
}

const SILENT: ProgressReporter = { start() {}, tick() {}, stop() {} };

/** A bar on stderr (stdout stays clean for --json and pipes); nothing when stderr is not a terminal. */
export function progressReporter(io: CliIo, enabled: boolean): ProgressReporter {
  if (!enabled || !io.stderrIsTTY) return SILENT;
  let bar: SingleBar | null = null;
  return {
    start(total, phase) {
      bar = new SingleBar(
        {
          format: `${phase.padEnd(8)} [{bar}] {percentage}% | {value}/{total} | {eta_formatted} left | {label}`,
          stream: process.stderr,
          hideCursor: true,
        },
        Presets.shades_classic,
      );
      bar.start(total, 0, { label: '' });
    },
    tick(label) {
      bar?.increment(1, { label: label.length > 40 ? label.slice(0, 37) + '...' : label });
    },
    stop() {
      bar?.stop();
      bar = null;
    },
  };
}

/** Prints a result: the JSON document with --json, else the human rendering. */
export function printResult(io: CliIo, json: boolean, value: unknown, text: () => string): void {
  io.stdout(json ? `${JSON.stringify(value, null, 2)}\n` : text());
}
