import { SessionEvent, type CompactionRecord } from 'session-compaction';
import { SUMMARY_METADATA } from 'session-compaction/spi';
import { count, html, query, time, type Html } from '../html.js';
import { notice, page } from '../layout.js';
import { requireParam, requireSnapshot, StudioError, tokensOf } from '../sessionData.js';
import type { StudioContext, ViewRequest } from '../StudioContext.js';
import { sawtooth, sawtoothChart } from './sawtooth.js';

/** What the summaries a compaction added say about their model call (cost only when the event records one). */
function summaryFacts(added: readonly SessionEvent[]): Html {
  const facts = added
    // The summary itself, not the synthetic user message that introduces it.
    .filter((e) => e.isSynthetic() && e.message.type !== 'user')
    .map((e) => {
      const m = e.metadata;
      const model = typeof m[SUMMARY_METADATA.model] === 'string' ? (m[SUMMARY_METADATA.model] as string) : null;
      const source =
        typeof m[SUMMARY_METADATA.sourceTokenCount] === 'number' ? (m[SUMMARY_METADATA.sourceTokenCount] as number) : null;
      const summary = typeof m[SUMMARY_METADATA.tokenCount] === 'number' ? (m[SUMMARY_METADATA.tokenCount] as number) : null;
      const usage = m.usage as { estimatedCost?: unknown; currency?: unknown } | undefined;
      const cost =
        usage !== undefined && typeof usage?.estimatedCost === 'number'
          ? `${usage.estimatedCost.toFixed(4)} ${typeof usage.currency === 'string' ? usage.currency : ''}`.trim()
          : null;
      return html`<span class="summary-fact"
        >${model ?? 'no model'}${source !== null && summary !== null ? html`, ${count(source)} → ${count(summary)} tokens` : ''}${
          cost !== null ? html`, cost <span data-col="cost">${cost}</span>` : ''
        }</span
      >`;
    });
  return facts.length === 0 ? html`<span class="muted">—</span>` : html`${facts}`;
}

export async function compactionsView(ctx: StudioContext, req: ViewRequest): Promise<Html> {
  const id = requireParam(req.params, 'id');
  const reverted = req.params.get('reverted');
  const applied = req.params.get('applied');
  const message =
    reverted !== null ? `Compaction ${reverted} reverted.` : applied !== null ? `Compaction ${applied} committed.` : undefined;
  const { events } = await requireSnapshot(ctx, id);
  if (ctx.service.listCompactions === undefined) throw new StudioError(500, 'the service cannot list compactions');
  let records: CompactionRecord[] = [];
  let unsupported: string | null = null;
  try {
    records = await ctx.service.listCompactions(id);
  } catch (error) {
    unsupported = (error as Error).message;
  }
  const byId = new Map<string, SessionEvent>();
  for (const r of records) for (const e of r.removedEvents) byId.set(e.id, e);
  for (const e of events) byId.set(e.id, e);
  const tokens = (ids: readonly string[]) => ids.reduce((sum, i) => sum + (byId.has(i) ? tokensOf(ctx, byId.get(i)!) : 0), 0);
  const revertible = records.find((r) => r.revertedAt === null)?.id ?? null;
  const rows = records.map((r) => {
    const added = r.addedEventIds.map((i) => byId.get(i)).filter((e): e is SessionEvent => e !== undefined);
    const revert =
      r.id !== revertible
        ? r.revertedAt !== null
          ? html`<span class="muted">reverted ${time(r.revertedAt)}</span>`
          : html`<span class="muted" title="only the newest compaction that stands can be reverted">standing</span>`
        : ctx.allowWrites
          ? html`<form
              method="post"
              action="/compactions/revert"
              data-confirm="Revert compaction ${r.id}? The window before it comes back."
            >
              <input type="hidden" name="csrf" value="${req.csrfToken}" />
              <input type="hidden" name="id" value="${id}" />
              <input type="hidden" name="compactionId" value="${r.id}" />
              <button type="submit" class="danger">Revert</button>
            </form>`
          : html`<button type="button" disabled title="start the studio with --allow-writes to revert">Revert</button>`;
    return html`<tr data-compaction="${r.id}" class="${r.revertedAt !== null ? 'reverted' : ''}">
      <td class="wrap">${time(r.createdAt)}<br /><code>${r.id}</code></td>
      <td class="wrap">
        ${r.strategy}${r.compactionSource !== null ? html`<br /><span class="muted">${r.compactionSource}</span>` : ''}
      </td>
      <td class="wrap">
        ${r.trigger ?? html`<span class="muted" title="written before records kept the trigger">not recorded</span>`}
      </td>
      <td class="num">${count(r.windowBefore.length)} → ${count(r.windowAfter.length)}</td>
      <td class="num" data-col="tokens-before">${count(tokens(r.windowBefore))}</td>
      <td class="num" data-col="tokens-after">${count(tokens(r.windowAfter))}</td>
      <td class="num">${count(r.archivedEventIds.length)}</td>
      <td>${summaryFacts(added)}</td>
      <td>
        ${r.range === null ? 'whole window' : html`<code>${r.range.fromEventId}</code> … <code>${r.range.toEventId}</code>`}
      </td>
      <td>${revert}</td>
    </tr>`;
  });
  const points = sawtooth(events, records, (e) => tokensOf(ctx, e));
  const body = html`<h1>Compactions</h1>
    ${message !== undefined ? notice('info', message) : ''} ${unsupported !== null ? notice('error', unsupported) : ''}
    <figure>
      ${sawtoothChart(points, ctx.contextWindowTokens)}
      <figcaption>
        Active tokens over the session's life: each event adds its tokens, each standing compaction (dot) cuts the window down to
        what it kept. ${records.some((r) => r.revertedAt !== null) ? 'Reverted compactions are left out.' : ''}
      </figcaption>
    </figure>
    <table class="compactions">
      <thead>
        <tr>
          <th>when</th>
          <th>strategy</th>
          <th>trigger</th>
          <th class="num">window events</th>
          <th class="num">tokens before</th>
          <th class="num">tokens after</th>
          <th class="num">archived</th>
          <th>summary (model, tokens, cost)</th>
          <th>range</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        ${
          rows.length > 0
            ? rows
            : html`<tr>
                <td colspan="10" class="empty">no compaction recorded</td>
              </tr>`
        }
      </tbody>
    </table>`;
  return page(ctx, { title: `Compactions ${id}`, sessionId: id, tab: 'compactions', body });
}

/** POST /compactions/revert: the service's revert (CAS-protected); answers where to go next. */
export async function revertAction(ctx: StudioContext, req: ViewRequest): Promise<string> {
  const id = requireParam(req.params, 'id');
  const compactionId = requireParam(req.params, 'compactionId');
  const result = await ctx.service.revertCompaction!(id, compactionId);
  return `/compactions${query({ id, reverted: result.compactionId })}`;
}
