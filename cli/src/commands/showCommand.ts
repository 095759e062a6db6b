import type { Command } from 'commander';
import { defaultTokenCountEstimator } from 'session-compaction';
import type { AdminContext, UrlFlags } from '../AdminContext.js';
import { printResult } from '../CliIo.js';
import { inspectSession, type SessionView } from '../admin/inspectSession.js';
import { readSnapshot } from '../admin/sessionSnapshot.js';
import { withUrlOptions } from './urlOptions.js';

interface ShowFlags extends UrlFlags {
  content?: boolean;
}

function render(v: SessionView): string {
  const a = v.tokens.active;
  const lines = [
    `session ${v.id}  user ${v.userId}  version ${v.version}`,
    `created ${v.createdAt}  expires ${v.expiresAt ?? 'never'}`,
    `events  ${v.events.total} total: ${v.events.active} active (${v.events.activeTurns} turns), ${v.events.archived} archived, ${v.events.synthetic} synthetic`,
    `tokens  active ${a.total} = system ${a.system} + summaries ${a.summaries} + user ${a.user} + assistant ${a.assistant} + tool results ${a.toolResults} + masked ${a.masked}; archived ${v.tokens.archived}`,
  ];
  if (v.summaries.length > 0) {
    lines.push('summaries');
    for (const s of v.summaries)
      lines.push(
        `  ${s.eventId}  ${s.source ?? '?'}  ${s.tokens} tokens, covers ${s.covers} event(s)${s.covers > 0 ? ` ${s.firstCoveredId} … ${s.lastCoveredId}` : ''}`,
      );
  }
  lines.push('log (A = archived, S = synthetic)');
  for (const e of v.log) {
    const flags = `${e.archived ? 'A' : ' '}${e.synthetic ? 'S' : ' '}`;
    const branch = e.branch === null ? '' : ` [${e.branch}]`;
    lines.push(
      `  ${String(e.index).padStart(4)} ${flags} ${e.type.padEnd(9)} ${String(e.tokens).padStart(6)}t  ${e.id}${branch}${e.preview !== undefined ? `  ${e.preview}` : ''}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export function registerShowCommand(program: Command, ctx: AdminContext): void {
  withUrlOptions(
    program
      .command('show')
      .description('One session: active window against the archive, summaries and what they cover, versions, token anatomy.')
      .argument('<sessionId>')
      .option('--no-content', 'leave message text out (ids, types and token counts only)'),
  ).action(async (sessionId: string, flags: ShowFlags) => {
    await ctx.withRepository(
      flags.url,
      { ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}) },
      async (repository) => {
        const snapshot = await readSnapshot(repository, sessionId);
        if (snapshot === null) {
          ctx.io.stderr(`session-compaction: session not found: ${sessionId}\n`);
          ctx.fail();
          return;
        }
        const view = inspectSession(snapshot, defaultTokenCountEstimator(), flags.content !== false);
        printResult(ctx.io, flags.json === true, view, () => render(view));
      },
    );
  });
}
