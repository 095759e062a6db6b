import type { Command } from 'commander';
import { InvalidArgumentError } from 'session-compaction';
import type { AdminContext, UrlFlags } from '../AdminContext.js';
import { printResult, progressReporter } from '../CliIo.js';
import { collectSessionIds } from '../admin/sessionIds.js';
import { readSnapshot } from '../admin/sessionSnapshot.js';
import { verifySnapshot, type SessionVerification } from '../admin/verifySession.js';
import { forEachConcurrently } from '../admin/forEachConcurrently.js';
import { withUrlOptions } from './urlOptions.js';

interface VerifyFlags extends UrlFlags {
  all?: boolean;
}

export function registerVerifyCommand(program: Command, ctx: AdminContext): void {
  withUrlOptions(
    program
      .command('verify')
      .description(
        'Check sessions: coverage ledger, CAS version, orphaned tool results, duplicate ids. Exit code 1 on any violation.',
      )
      .argument('[sessionId]')
      .option('--all', 'every session of the store'),
  ).action(async (sessionId: string | undefined, flags: VerifyFlags) => {
    if ((sessionId === undefined) === (flags.all !== true)) throw new InvalidArgumentError('give either a session id or --all');
    await ctx.withRepository(
      flags.url,
      { ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}) },
      async (repository, where) => {
        const ids = sessionId !== undefined ? [sessionId] : await collectSessionIds(repository);
        const results: SessionVerification[] = [];
        const missing: string[] = [];
        const progress = progressReporter(ctx.io, flags.progress !== false && ids.length > 1);
        progress.start(ids.length, 'verify');
        await forEachConcurrently(ids, 4, async (id) => {
          const snapshot = await readSnapshot(repository, id);
          if (snapshot === null) missing.push(id);
          else results.push(verifySnapshot(snapshot));
          progress.tick(id);
        });
        progress.stop();
        results.sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0));
        const failed = results.filter((r) => !r.ok);
        if (failed.length > 0 || (sessionId !== undefined && missing.length > 0)) ctx.fail();
        const summary = {
          store: where,
          sessions: results.length,
          events: results.reduce((n, r) => n + r.events, 0),
          ok: failed.length === 0 && !(sessionId !== undefined && missing.length > 0),
          violations: failed.reduce((n, r) => n + r.violations.length, 0),
          missing,
        };
        printResult(ctx.io, flags.json === true, { ...summary, results: flags.all === true ? failed : results }, () => {
          const lines: string[] = [];
          for (const r of failed)
            for (const v of r.violations)
              lines.push(
                `VIOLATION ${r.sessionId} ${v.kind}: ${v.message}${v.eventIds.length > 0 ? ` [${v.eventIds.join(', ')}]` : ''}`,
              );
          for (const id of missing) lines.push(`MISSING ${id}`);
          if (sessionId !== undefined && results[0] !== undefined) {
            const r = results[0];
            lines.push(
              `${r.sessionId}: version ${r.version}, ${r.events} events (${r.active} active, ${r.archived} archived); ` +
                `originals ${r.coverage.originals}: ${r.coverage.verbatim} verbatim, ${r.coverage.summarized} summarised, ` +
                `${r.coverage.masked} masked, ${r.coverage.uncovered} dropped by the window`,
            );
          }
          lines.push(
            `${summary.ok ? 'OK' : 'FAILED'}: ${summary.sessions} session(s), ${summary.events} events, ${summary.violations} violation(s) in ${where}`,
          );
          return `${lines.join('\n')}\n`;
        });
      },
    );
  });
}
