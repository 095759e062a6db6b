import { EventFilter, type Session } from 'session-compaction';
import {
  estimateEventsTokens,
  isEnumerableRepository,
  isSessionListingRepository,
  type SessionListing,
  type SessionListingPage,
} from 'session-compaction/spi';
import { count, html, query, time, type Html } from '../html.js';
import { page } from '../layout.js';
import type { StudioContext, ViewRequest } from '../StudioContext.js';

/** Sessions per page: each listed session's active window is read and counted. */
export const SESSIONS_PAGE_SIZE = 50;

export interface ListedSession extends SessionListing {
  activeTokens: number;
}

/**
 * The compactions of `sessionId` that stand, from the light listing (summaries: no id arrays leave the store);
 * 0 when the service cannot list them, as a listing store counts on a store without compaction records.
 */
async function standingCompactions(ctx: StudioContext, sessionId: string): Promise<number> {
  if (ctx.service.listCompactions === undefined) return 0;
  try {
    const summaries = await ctx.service.listCompactions(sessionId, { eventIds: false });
    return summaries.filter((r) => r.revertedAt === null).length;
  } catch {
    return 0;
  }
}

/**
 * Without a SessionListingRepository (Redis): the ids page by page through listSessionIds (or the user's
 * sessions), then each session read on its own. Slower, but the same rows.
 */
async function listSlowly(
  ctx: StudioContext,
  options: { cursor: string | null; userId: string | null; idPrefix: string | null; limit: number },
): Promise<SessionListingPage> {
  const repository = ctx.repository;
  let sessions: Session[];
  let cursor: string | null;
  if (options.userId !== null) {
    const all = (await repository.findByUserId(options.userId))
      .filter((s) => options.idPrefix === null || s.id.startsWith(options.idPrefix))
      .filter((s) => options.cursor === null || s.id > options.cursor)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    sessions = all.slice(0, options.limit);
    cursor = all.length > options.limit ? sessions[sessions.length - 1]!.id : null;
  } else if (isEnumerableRepository(repository)) {
    const ids = await repository.listSessionIds({ cursor: options.cursor, limit: options.limit });
    const found = await Promise.all(
      ids.ids.filter((id) => options.idPrefix === null || id.startsWith(options.idPrefix)).map((id) => repository.findById(id)),
    );
    sessions = found.filter((s): s is Session => s !== null);
    cursor = ids.cursor;
  } else {
    sessions = [];
    cursor = null;
  }
  const listings = await Promise.all(
    sessions.map(async (session) => {
      const log = await repository.findEvents(session.id, EventFilter.all());
      const version = await repository.getEventVersion(session.id);
      const last = log[log.length - 1];
      return {
        session,
        version,
        activeEvents: log.filter((e) => !e.archived).length,
        archivedEvents: log.filter((e) => e.archived).length,
        lastEventAt: last === undefined ? null : last.timestamp,
        compactions: await standingCompactions(ctx, session.id),
        activeWindow: log.filter((e) => !e.archived),
      };
    }),
  );
  return { sessions: listings, cursor };
}

/** One page of sessions with their active tokens, through the store's listing when it has one. */
export async function listSessionPage(
  ctx: StudioContext,
  options: { cursor: string | null; userId: string | null; idPrefix: string | null; limit?: number },
): Promise<{ sessions: ListedSession[]; cursor: string | null }> {
  const limit = options.limit ?? SESSIONS_PAGE_SIZE;
  const repository = ctx.repository;
  const listed = isSessionListingRepository(repository)
    ? await repository.listSessions({
        limit,
        withActiveEvents: true,
        ...(options.cursor !== null ? { cursor: options.cursor } : {}),
        ...(options.userId !== null ? { userId: options.userId } : {}),
        ...(options.idPrefix !== null ? { idPrefix: options.idPrefix } : {}),
      })
    : await listSlowly(ctx, { ...options, limit });
  // Exact tokens of each active window, as the triggers count them (memoised per event by the estimator).
  const sessions = await Promise.all(
    listed.sessions.map(async (l) => {
      const active =
        l.activeWindow ?? (l.activeEvents === 0 ? [] : await repository.findEvents(l.session.id, EventFilter.active()));
      return { ...l, activeTokens: estimateEventsTokens(active, ctx.estimator) };
    }),
  );
  return { sessions, cursor: listed.cursor };
}

function pressureBar(tokens: number, window: number): Html {
  const pct = window > 0 ? (tokens / window) * 100 : 0;
  const level = pct >= 90 ? 'high' : pct >= 70 ? 'mid' : 'low';
  // SVG attributes, not inline styles: the page's Content-Security-Policy allows no inline style.
  return html`<span class="pressure ${level}" title="${count(tokens)} of ${count(window)} tokens"
    ><svg viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true">
      <rect class="track" width="100" height="8"></rect>
      <rect class="fill" width="${Math.min(100, pct).toFixed(1)}" height="8"></rect></svg
    ><em>${pct.toFixed(0)} %</em></span
  >`;
}

export async function sessionsView(ctx: StudioContext, req: ViewRequest): Promise<Html> {
  const text = (name: string) => {
    const v = req.params.get(name)?.trim() ?? '';
    return v === '' ? null : v;
  };
  const userId = text('user');
  const idPrefix = text('id');
  const cursor = text('after');
  const started = performance.now();
  const { sessions, cursor: next } = await listSessionPage(ctx, { cursor, userId, idPrefix });
  const elapsed = performance.now() - started;
  const rows = sessions.map(
    (l) =>
      html`<tr data-session="${l.session.id}">
        <td><a href="/session${query({ id: l.session.id })}">${l.session.id}</a></td>
        <td><a href="/${query({ user: l.session.userId })}">${l.session.userId}</a></td>
        <td class="num" data-col="active">${count(l.activeEvents)}</td>
        <td class="num" data-col="archived">${count(l.archivedEvents)}</td>
        <td class="num" data-col="tokens">${count(l.activeTokens)}</td>
        <td>${pressureBar(l.activeTokens, ctx.contextWindowTokens)}</td>
        <td class="num" data-col="compactions">
          ${l.compactions > 0 ? html`<a href="/compactions${query({ id: l.session.id })}">${l.compactions}</a>` : '0'}
        </td>
        <td>${time(l.lastEventAt ?? l.session.createdAt)}</td>
        <td>${time(l.session.createdAt)}</td>
      </tr>`,
  );
  const body = html`<h1>Sessions</h1>
    <form class="search" method="get" action="/">
      <label>User <input name="user" value="${userId ?? ''}" placeholder="exact user id" /></label>
      <label>Session id <input name="id" value="${idPrefix ?? ''}" placeholder="id prefix" /></label>
      <button type="submit">Search</button>
      ${userId !== null || idPrefix !== null ? html`<a href="/">clear</a>` : ''}
    </form>
    <table class="sessions">
      <thead>
        <tr>
          <th>session</th>
          <th>user</th>
          <th class="num">active events</th>
          <th class="num">archived events</th>
          <th class="num">active tokens</th>
          <th>pressure (of ${count(ctx.contextWindowTokens)})</th>
          <th class="num">compactions</th>
          <th>last activity</th>
          <th>created</th>
        </tr>
      </thead>
      <tbody>
        ${
          rows.length > 0
            ? rows
            : html`<tr>
                <td colspan="9" class="empty">no session</td>
              </tr>`
        }
      </tbody>
    </table>
    <p class="pager">
      ${cursor !== null ? html`<a href="/${query({ user: userId, id: idPrefix })}">« first page</a>` : ''}
      ${next !== null ? html`<a rel="next" href="/${query({ user: userId, id: idPrefix, after: next })}">next page »</a>` : ''}
      <span class="timing">${sessions.length} session(s), page read in ${elapsed.toFixed(0)} ms</span>
    </p>`;
  return page(ctx, { title: 'Sessions', section: 'sessions', body });
}
