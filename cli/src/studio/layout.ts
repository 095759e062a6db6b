import { html, query, type Html } from './html.js';
import type { StudioContext } from './StudioContext.js';

export type SessionTab = 'timeline' | 'compactions' | 'prompt' | 'preview' | 'health';

const TABS: readonly [SessionTab, string, string][] = [
  ['timeline', 'Timeline', '/session'],
  ['compactions', 'Compactions', '/compactions'],
  ['prompt', 'Prompt', '/prompt'],
  ['preview', 'Preview', '/preview'],
  ['health', 'Health', '/health'],
];

export interface PageOptions {
  title: string;
  /** The session the page is about: its tabs are shown. */
  sessionId?: string;
  tab?: SessionTab;
  /** 'sessions' or 'health' for the store-wide pages. */
  section?: 'sessions' | 'health';
  body: Html;
}

/** The whole page: header with the store and the mode, the session's tabs, the body. */
export function page(ctx: StudioContext, options: PageOptions): Html {
  const mode = ctx.allowWrites
    ? html`<span class="mode writes" title="started with --allow-writes">writes allowed</span>`
    : html`<span class="mode" title="start with --allow-writes to revert or apply">read-only</span>`;
  const tabs =
    options.sessionId === undefined
      ? ''
      : html`<nav class="tabs" aria-label="session">
          <span class="session-id">${options.sessionId}</span>
          ${TABS.map(
            ([tab, label, path]) =>
              html`<a
                href="${path}${query({ id: options.sessionId })}"
                class="${tab === options.tab ? 'active' : ''}"
                data-tab="${tab}"
                >${label}</a
              >`,
          )}
        </nav>`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>${options.title} · session-compaction studio</title>
        <link rel="stylesheet" href="/assets/studio.css" />
        <script src="/assets/studio.js" defer></script>
      </head>
      <body>
        <header>
          <a class="brand" href="/">session-compaction studio</a>
          <a href="/" class="${options.section === 'sessions' ? 'active' : ''}">Sessions</a>
          <a href="/health" class="${options.section === 'health' ? 'active' : ''}">Health</a>
          <span class="store" title="the store this studio reads">${ctx.where}</span>
          ${mode}
        </header>
        ${tabs}
        <main>${options.body}</main>
      </body>
    </html>`;
}

/** A message box (errors, results of an action). */
export function notice(kind: 'error' | 'info', text: string): Html {
  return html`<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>`;
}
