import type { Command } from 'commander';
import { InvalidArgumentError, type SessionRepository, type Session } from 'session-compaction';
import type { AdminContext, UrlFlags } from '../AdminContext.js';
import { printResult } from '../CliIo.js';
import { allSessionIds } from '../admin/sessionIds.js';
import { withUrlOptions } from './urlOptions.js';

interface ListFlags extends UrlFlags {
  user?: string;
  limit?: string;
}

interface ListedSession {
  id: string;
  userId: string;
  createdAt: string;
  expiresAt: string | null;
  version: number;
}

async function listed(repository: SessionRepository, s: Session): Promise<ListedSession> {
  return {
    id: s.id,
    userId: s.userId,
    createdAt: s.createdAt.toISOString(),
    expiresAt: s.expiresAt === null ? null : s.expiresAt.toISOString(),
    version: await repository.getEventVersion(s.id),
  };
}

export function registerSessionsCommand(program: Command, ctx: AdminContext): void {
  const sessions = program.command('sessions').description('List sessions.');
  withUrlOptions(
    sessions
      .command('list')
      .description("a user's sessions (--user), or every session of the store")
      .option('--user <userId>', 'only this user’s sessions')
      .option('--limit <n>', 'at most n sessions (default 100; 0 = all)', '100'),
  ).action(async (flags: ListFlags) => {
    const limit = Number(flags.limit ?? '100');
    if (!Number.isInteger(limit) || limit < 0) throw new InvalidArgumentError('--limit must be an integer >= 0');
    await ctx.withRepository(
      flags.url,
      { ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}) },
      async (repository, where) => {
        const out: ListedSession[] = [];
        if (flags.user !== undefined) {
          for (const s of await repository.findByUserId(flags.user)) {
            if (limit > 0 && out.length >= limit) break;
            out.push(await listed(repository, s));
          }
        } else {
          for await (const id of allSessionIds(repository)) {
            if (limit > 0 && out.length >= limit) break;
            const s = await repository.findById(id);
            if (s !== null) out.push(await listed(repository, s));
          }
        }
        printResult(ctx.io, flags.json === true, { store: where, sessions: out }, () => {
          const header = `${'session'.padEnd(38)} ${'user'.padEnd(20)} ${'created'.padEnd(24)} ${'expires'.padEnd(24)} version\n`;
          const rows = out.map(
            (s) =>
              `${s.id.padEnd(38)} ${s.userId.padEnd(20)} ${s.createdAt.padEnd(24)} ${(s.expiresAt ?? 'never').padEnd(24)} ${s.version}\n`,
          );
          return `${header}${rows.join('')}${out.length} session(s) in ${where}\n`;
        });
      },
    );
  });
}
