import { count, html, time, type Html } from '../html.js';
import { page } from '../layout.js';
import { requireParam, requireSnapshot, tokensOf } from '../sessionData.js';
import type { StudioContext, ViewRequest } from '../StudioContext.js';
import { eventList } from './eventList.js';

export async function timelineView(ctx: StudioContext, req: ViewRequest): Promise<Html> {
  const id = requireParam(req.params, 'id');
  const { session, version, events, stable } = await requireSnapshot(ctx, id);
  const active = events.filter((e) => !e.archived);
  const activeTokens = active.reduce((sum, e) => sum + tokensOf(ctx, e), 0);
  const archivedTokens = events.filter((e) => e.archived).reduce((sum, e) => sum + tokensOf(ctx, e), 0);
  const highlight = new Set((req.params.get('highlight') ?? '').split(',').filter((s) => s !== ''));
  const body = html`<h1>Timeline</h1>
    <dl class="facts">
      <dt>user</dt>
      <dd>${session.userId}</dd>
      <dt>created</dt>
      <dd>${time(session.createdAt)}</dd>
      <dt>expires</dt>
      <dd>${time(session.expiresAt)}</dd>
      <dt>version</dt>
      <dd>${version}</dd>
      <dt>active</dt>
      <dd data-fact="active">${count(active.length)} events, ${count(activeTokens)} tokens</dd>
      <dt>archived</dt>
      <dd data-fact="archived">${count(events.length - active.length)} events, ${count(archivedTokens)} tokens</dd>
    </dl>
    ${stable ? '' : html`<p class="notice info">the log changed while it was read: reload for one consistent state</p>`}
    <p class="legend">
      Every event of the log in order. Archived events are what compaction took out of the window; summaries show the range they
      cover and expand to the originals; tool calls link to their results.
    </p>
    ${eventList(ctx, events, { highlight })}`;
  return page(ctx, { title: `Timeline ${id}`, sessionId: id, tab: 'timeline', body });
}
