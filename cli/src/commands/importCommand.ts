import type { Command } from 'commander';
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { AdminContext, UrlFlags } from '../AdminContext.js';
import { printResult, progressReporter } from '../CliIo.js';
import { importSession } from '../admin/exportFormat.js';
import { writeSession, type WriteOutcome } from '../admin/writeSession.js';
import { withUrlOptions } from './urlOptions.js';

interface ImportFlags extends UrlFlags {
  in: string;
  user: string;
  overwrite?: boolean;
  concurrency: string;
  durable?: boolean;
}

const MB = 1024 * 1024;

export function registerImportCommand(program: Command, ctx: AdminContext): void {
  withUrlOptions(
    program
      .command('import')
      .description(
        'Read a JSON Lines export (or plain neutral recorded sessions, one per line) into a store. Idempotent by event id: run it again to finish an interrupted import.',
      )
      .requiredOption('--in <file>', 'the JSON Lines file')
      .option('--user <userId>', 'owner of sessions whose line names none', 'imported')
      .option('--overwrite', 'replace target sessions whose log differs from the file’s')
      .option('--concurrency <n>', 'sessions written at once', '4')
      .option(
        '--durable',
        'SQLite: sync every commit to disk (default: WAL with synchronous=NORMAL, crash-safe for the process)',
      ),
  ).action(async (flags: ImportFlags) => {
    const concurrency = Math.max(1, Number(flags.concurrency) || 1);
    const size = statSync(flags.in).size;
    await ctx.withRepository(
      flags.url,
      {
        initializeSchema: true,
        ...(flags.durable === true ? {} : { synchronous: 'NORMAL' as const }),
        ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}),
      },
      async (repository, where) => {
        const counts = { written: 0, resumed: 0, unchanged: 0, overwritten: 0, eventsAppended: 0, versionBumps: 0 };
        const failures: { line: number; sessionId: string | null; error: string }[] = [];
        const progress = progressReporter(ctx.io, flags.progress !== false);
        progress.start(Math.max(1, Math.round(size / MB)), 'import MB');
        let read = 0;
        let shown = 0;
        let lineNo = 0;
        const inFlight = new Set<Promise<void>>();
        const now = new Date();
        const lines = createInterface({ input: createReadStream(flags.in, { encoding: 'utf8' }), crlfDelay: Infinity });
        for await (const line of lines) {
          const n = ++lineNo;
          read += Buffer.byteLength(line, 'utf8') + 1;
          while (shown < Math.floor(read / MB)) {
            progress.tick(`line ${n}`);
            shown++;
          }
          if (line.trim() === '') continue;
          let sessionId: string | null = null;
          const task = (async () => {
            try {
              const value = JSON.parse(line) as { sessionId?: unknown };
              sessionId = typeof value.sessionId === 'string' ? value.sessionId : null;
              const outcome: WriteOutcome = await writeSession(repository, importSession(value, { userId: flags.user, now }), {
                overwrite: flags.overwrite === true,
              });
              counts[outcome.status]++;
              counts.eventsAppended += outcome.appended;
              counts.versionBumps += outcome.versionBumps;
            } catch (error) {
              failures.push({ line: n, sessionId, error: error instanceof Error ? error.message : String(error) });
            }
          })();
          inFlight.add(task);
          void task.finally(() => inFlight.delete(task));
          if (inFlight.size >= concurrency) await Promise.race(inFlight);
        }
        await Promise.all(inFlight);
        progress.stop();
        if (failures.length > 0) ctx.fail();
        const report = { store: where, in: flags.in, lines: lineNo, ...counts, failures };
        printResult(ctx.io, flags.json === true, report, () => {
          const failed = failures
            .map((f) => `FAILED line ${f.line}${f.sessionId !== null ? ` (${f.sessionId})` : ''}: ${f.error}\n`)
            .join('');
          return (
            `${failed}imported into ${where}: ${counts.written} written, ${counts.resumed} resumed, ${counts.unchanged} unchanged, ` +
            `${counts.overwritten} overwritten; ${counts.eventsAppended} events appended; ${failures.length} failure(s)\n`
          );
        });
      },
    );
  });
}
