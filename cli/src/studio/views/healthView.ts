import type { CoverageReport } from 'session-compaction';
import { isEnumerableRepository, isMigratableRepository, type SchemaStatus } from 'session-compaction/spi';
import { verifySnapshot } from '../../admin/verifySession.js';
import { count, html, query, type Html } from '../html.js';
import { notice, page } from '../layout.js';
import { requireSnapshot, StudioError } from '../sessionData.js';
import type { StudioContext, ViewRequest } from '../StudioContext.js';

const MAX_SCAN = 1000;

function schemaSection(status: SchemaStatus | null, error: string | null): Html {
  if (error !== null) return notice('error', `schema status unavailable: ${error}`);
  if (status === null) return html`<p data-schema="none">This store keeps no schema version (an in-process or custom store).</p>`;
  const state =
    status.unknown.length > 0
      ? 'newer'
      : status.pending.length > 0
        ? 'behind'
        : status.applied.length === 0
          ? 'empty'
          : 'current';
  return html`<dl class="facts" data-schema="${state}">
    <dt>backend</dt>
    <dd>${status.backend}</dd>
    <dt>location</dt>
    <dd>${status.location}</dd>
    <dt>applied</dt>
    <dd>${status.applied.join(', ') || 'none'}</dd>
    <dt>latest known</dt>
    <dd>${status.latest}</dd>
    <dt>state</dt>
    <dd class="state-${state}">
      ${
        state === 'current'
          ? 'current'
          : state === 'behind'
            ? `behind: pending ${status.pending.map((p) => `${p.version} (${p.name})`).join(', ')} — run session-compaction migrate`
            : state === 'newer'
              ? `newer than this release (unknown versions ${status.unknown.join(', ')})`
              : 'no schema'
      }
    </dd>
  </dl>`;
}

/**
 * 'ok': every original is in the context once; 'dropped': some are represented nowhere (what a sliding window
 * does by design, no fault); 'duplicated': some are there twice, a broken ledger.
 */
function coverageState(report: CoverageReport): 'ok' | 'dropped' | 'duplicated' {
  return report.duplicated.length > 0 ? 'duplicated' : report.uncovered.length > 0 ? 'dropped' : 'ok';
}

const COVERAGE_TEXT = {
  ok: 'ok: every original event is in the context exactly once (verbatim, summarised or masked)',
  dropped: 'sound, with events dropped: some archived events are represented nowhere (mechanical strategies drop by design)',
  duplicated: 'violated: some original events are in the context more than once',
} as const;

function coverageSection(report: CoverageReport): Html {
  const state = coverageState(report);
  return html`<dl class="facts" data-coverage="${state}">
      <dt>coverage</dt>
      <dd class="${state === 'duplicated' ? 'bad' : 'ok'}">${COVERAGE_TEXT[state]}</dd>
      <dt>originals</dt>
      <dd>${count(report.originals)}</dd>
      <dt>verbatim</dt>
      <dd>${count(report.verbatim.length)}</dd>
      <dt>summarised</dt>
      <dd>${count(report.summarized.length)}</dd>
      <dt>masked</dt>
      <dd>${count(report.masked.length)}</dd>
      <dt>uncovered (dropped)</dt>
      <dd>${count(report.uncovered.length)}</dd>
      <dt>duplicated</dt>
      <dd>${report.duplicated.length === 0 ? '0' : report.duplicated.join(', ')}</dd>
      <dt>redacted</dt>
      <dd>${count(report.redacted.length)}</dd>
      <dt>tainted summaries</dt>
      <dd>${report.tainted.length === 0 ? '0' : report.tainted.join(', ')}</dd>
      <dt>malformed rows</dt>
      <dd data-malformed="${report.malformed.length}">${report.malformed.length}</dd>
    </dl>
    ${
      report.malformed.length === 0
        ? ''
        : html`<table class="malformed">
            <thead>
              <tr>
                <th>event</th>
                <th>what was wrong as stored</th>
              </tr>
            </thead>
            <tbody>
              ${report.malformed.map(
                (m) =>
                  html`<tr>
                    <td><code>${m.id}</code></td>
                    <td>${m.problems.join('; ')}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }`;
}

async function sessionHealth(ctx: StudioContext, id: string): Promise<Html> {
  const snapshot = await requireSnapshot(ctx, id);
  const coverage = await ctx.service.verifyCoverage(id);
  const verification = verifySnapshot(snapshot);
  return html`<h2>Session <a href="/session${query({ id })}">${id}</a></h2>
    ${coverageSection(coverage)}
    <h3>Invariants</h3>
    ${
      verification.violations.length === 0
        ? html`<p class="ok" data-violations="0">
            No violation: ids unique, coverage ledger sound, version consistent, tool results paired.
          </p>`
        : html`<ul class="violations" data-violations="${verification.violations.length}">
            ${verification.violations.map((v) => html`<li><strong>${v.kind}</strong>: ${v.message} <code>${v.eventIds.join(', ')}</code></li>`)}
          </ul>`
    }`;
}

/** The first `limit` sessions checked: coverage, malformed rows and the invariants, problems listed. */
async function scan(ctx: StudioContext, limit: number): Promise<Html> {
  if (!isEnumerableRepository(ctx.repository)) return notice('error', 'this store cannot list its sessions');
  const problems: Html[] = [];
  let checked = 0;
  let cursor: string | null = null;
  do {
    const page = await ctx.repository.listSessionIds({ cursor, limit: Math.min(200, limit - checked) });
    for (const id of page.ids) {
      if (checked >= limit) break;
      checked++;
      const snapshot = await requireSnapshot(ctx, id).catch(() => null);
      if (snapshot === null) continue;
      const v = verifySnapshot(snapshot);
      const coverage = await ctx.service.verifyCoverage(id);
      if (v.violations.length > 0 || coverage.malformed.length > 0) {
        problems.push(
          html`<tr>
            <td><a href="/health${query({ id })}">${id}</a></td>
            <td>${v.violations.map((x) => x.kind).join(', ') || '—'}</td>
            <td class="num">${coverage.malformed.length}</td>
          </tr>`,
        );
      }
    }
    cursor = page.cursor;
  } while (cursor !== null && checked < limit);
  return html`<h2>Scan</h2>
    <p data-scanned="${checked}">${count(checked)} session(s) checked, ${problems.length} with problems.</p>
    ${
      problems.length === 0
        ? ''
        : html`<table>
            <thead>
              <tr>
                <th>session</th>
                <th>violations</th>
                <th class="num">malformed rows</th>
              </tr>
            </thead>
            <tbody>
              ${problems}
            </tbody>
          </table>`
    }`;
}

export async function healthView(ctx: StudioContext, req: ViewRequest): Promise<Html> {
  const id = req.params.get('id')?.trim() ?? '';
  let status: SchemaStatus | null = null;
  let error: string | null = null;
  if (isMigratableRepository(ctx.repository)) {
    try {
      status = await ctx.repository.schemaStatus();
    } catch (e) {
      error = (e as Error).message;
    }
  }
  const scanRaw = req.params.get('scan');
  let scanned: Html = html``;
  if (scanRaw !== null && scanRaw !== '') {
    const n = Number(scanRaw);
    if (!Number.isInteger(n) || n < 1 || n > MAX_SCAN)
      throw new StudioError(400, `scan must be an integer from 1 to ${MAX_SCAN}`);
    scanned = await scan(ctx, n);
  }
  const body = html`<h1>Health</h1>
    <h2>Schema</h2>
    ${schemaSection(status, error)}
    <form class="search" method="get" action="/health">
      <label>Session id <input name="id" value="${id}" placeholder="check one session" /></label>
      <button type="submit">Check</button>
    </form>
    <form class="search" method="get" action="/health">
      <label>The first <input name="scan" type="number" min="1" max="${MAX_SCAN}" value="${scanRaw ?? '100'}" /> sessions</label>
      <button type="submit">Scan</button>
    </form>
    ${id !== '' ? await sessionHealth(ctx, id) : ''} ${scanned}`;
  return page(ctx, {
    title: 'Health',
    ...(id !== '' ? { sessionId: id, tab: 'health' as const } : { section: 'health' as const }),
    body,
  });
}
