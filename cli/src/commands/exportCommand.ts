import type { Command } from 'commander';
import { createReadStream, createWriteStream, existsSync, statSync, truncateSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { InvalidArgumentError } from 'session-compaction';
import type { AdminContext, UrlFlags } from '../AdminContext.js';
import { printResult, progressReporter } from '../CliIo.js';
import { exportSession } from '../admin/exportFormat.js';
import { forEachConcurrently } from '../admin/forEachConcurrently.js';
import { collectSessionIds } from '../admin/sessionIds.js';
import { readSnapshot } from '../admin/sessionSnapshot.js';
import { withUrlOptions } from './urlOptions.js';

interface ExportFlags extends UrlFlags {
  out?: string;
  session?: string[];
  user?: string;
  resume?: boolean;
  force?: boolean;
}

/**
 * The session ids already in an export file, after cutting off a last line that a killed run left
 * unfinished (it has no newline): those sessions are skipped when the export resumes.
 */
async function completedSessions(path: string): Promise<Set<string>> {
  const done = new Set<string>();
  let complete = 0;
  let offset = 0;
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of lines) {
    offset += Buffer.byteLength(line, 'utf8') + 1;
    try {
      const id = (JSON.parse(line) as { sessionId?: unknown }).sessionId;
      if (typeof id === 'string') {
        done.add(id);
        complete = offset;
      }
    } catch {
      break; // the unfinished last line
    }
  }
  if (complete < statSync(path).size) truncateSync(path, complete);
  return done;
}

async function writeLine(stream: Writable, line: string): Promise<void> {
  if (!stream.write(line)) await once(stream, 'drain');
}

export function registerExportCommand(program: Command, ctx: AdminContext): void {
  withUrlOptions(
    program
      .command('export')
      .description(
        'Write sessions as JSON Lines, one session per line in the neutral recorded format (plus ids, archived flags, versions). Streaming; --resume continues a killed export.',
      )
      .option('--out <file>', 'the file to write (default stdout)')
      .option('--session <ids...>', 'only these sessions')
      .option('--user <userId>', 'only this user’s sessions')
      .option('--resume', 'append to an existing --out file, skipping the sessions it already holds')
      .option('--force', 'overwrite an existing --out file'),
  ).action(async (flags: ExportFlags) => {
    if (flags.resume === true && flags.out === undefined) throw new InvalidArgumentError('--resume needs --out');
    if (flags.out !== undefined && existsSync(flags.out) && flags.resume !== true && flags.force !== true) {
      throw new InvalidArgumentError(`${flags.out} exists: use --resume to continue it or --force to overwrite it`);
    }
    const skip =
      flags.resume === true && flags.out !== undefined && existsSync(flags.out)
        ? await completedSessions(flags.out)
        : new Set<string>();
    await ctx.withRepository(
      flags.url,
      { ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}) },
      async (repository, where) => {
        const ids =
          flags.session !== undefined
            ? flags.session
            : flags.user !== undefined
              ? (await repository.findByUserId(flags.user)).map((s) => s.id)
              : await collectSessionIds(repository);
        const todo = ids.filter((id) => !skip.has(id));
        const stream: Writable =
          flags.out === undefined ? process.stdout : createWriteStream(flags.out, { flags: flags.resume === true ? 'a' : 'w' });
        const progress = progressReporter(ctx.io, flags.progress !== false && flags.out !== undefined);
        let sessions = 0;
        let events = 0;
        const missing: string[] = [];
        progress.start(todo.length, 'export');
        try {
          await forEachConcurrently(todo, 4, async (id) => {
            const snapshot = await readSnapshot(repository, id);
            if (snapshot === null) missing.push(id);
            else {
              await writeLine(stream, `${JSON.stringify(exportSession(snapshot))}\n`);
              sessions++;
              events += snapshot.events.length;
            }
            progress.tick(id);
          });
        } finally {
          progress.stop();
          if (stream !== process.stdout) {
            stream.end();
            await once(stream, 'finish');
          }
        }
        if (flags.session !== undefined && missing.length > 0) ctx.fail();
        const report = { store: where, out: flags.out ?? null, sessions, events, skipped: skip.size, missing };
        // The export itself may be on stdout: the summary then goes to stderr.
        if (flags.out === undefined) ctx.io.stderr(`exported ${sessions} session(s), ${events} events from ${where}\n`);
        else
          printResult(
            ctx.io,
            flags.json === true,
            report,
            () =>
              `exported ${sessions} session(s), ${events} events from ${where} to ${flags.out}${skip.size > 0 ? ` (${skip.size} already there)` : ''}\n`,
          );
      },
    );
  });
}
