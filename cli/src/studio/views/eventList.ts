import type { SessionEvent } from 'session-compaction';
import { count, html, time, type Html } from '../html.js';
import { badgesOf, coveredIds, pairToolCalls, textOf, tokensOf } from '../sessionData.js';
import type { StudioContext } from '../StudioContext.js';

const SHOWN_CHARS = 600;

export interface EventListOptions {
  /** Ids to highlight (the prompt view's recalled events). */
  highlight?: ReadonlySet<string>;
  /** Ids of the active events a prompt sent. */
  sent?: ReadonlySet<string>;
  /** Events a compaction removed (superseded summaries): originals a summary covers may be among them. */
  extra?: readonly SessionEvent[];
}

/** The text, cut with a visible marker; the whole of it one click away. */
function content(text: string): Html {
  if (text.length <= SHOWN_CHARS) return html`<pre class="text">${text}</pre>`;
  return html`<details class="long">
    <summary>
      <pre class="text">${text.slice(0, SHOWN_CHARS)}…</pre>
      <span class="more">show all ${count(text.length)} characters</span>
    </summary>
    <pre class="text">${text}</pre>
  </details>`;
}

/** Every event in log order with role, tokens, badges, tool pairing and, for summaries, what they cover. */
export function eventList(ctx: StudioContext, events: readonly SessionEvent[], options: EventListOptions = {}): Html {
  const indexOf = new Map(events.map((e, i) => [e.id, i]));
  const byId = new Map([...(options.extra ?? []), ...events].map((e) => [e.id, e]));
  const tools = pairToolCalls(events);
  const ref = (i: number | null) => (i === null ? html`<em>none in the log</em>` : html`<a href="#ev-${i}">#${i}</a>`);
  const items = events.map((e, i) => {
    const badges = badgesOf(e);
    const classes = [
      'event',
      `role-${e.message.type}`,
      e.archived ? 'archived' : 'active',
      options.highlight?.has(e.id) === true ? 'recalled' : '',
      options.sent?.has(e.id) === true ? 'sent' : '',
      ...badges.filter((b) => b !== 'active' && b !== 'archived').map((b) => `is-${b.replace(' ', '-')}`),
    ].filter((c) => c !== '');
    const covered = badges.includes('summary') || badges.includes('masked') ? coveredIds(e) : [];
    const coverage =
      covered.length === 0
        ? ''
        : html`<details class="covers">
            <summary>
              covers ${covered.length} event(s): ${indexOf.has(covered[0]!) ? ref(indexOf.get(covered[0]!)!) : covered[0]} …
              ${indexOf.has(covered[covered.length - 1]!) ? ref(indexOf.get(covered[covered.length - 1]!)!) : covered[covered.length - 1]}
            </summary>
            <ol class="originals">
              ${covered.map((id) => {
                const original = byId.get(id);
                return html`<li>
                  ${indexOf.has(id) ? ref(indexOf.get(id)!) : ''} <code>${id}</code>
                  ${
                    original === undefined
                      ? html`<em>not in the log</em>`
                      : html`<span class="role">${original.message.type}</span> ${content(textOf(original))}`
                  }
                </li>`;
              })}
            </ol>
          </details>`;
    const calls = tools.calls.get(i);
    const results = tools.results.get(i);
    return html`<li id="ev-${i}" class="${classes.join(' ')}" data-event-id="${e.id}" data-tokens="${tokensOf(ctx, e)}">
      <div class="meta">
        <a class="index" href="#ev-${i}">#${i}</a>
        <span class="role">${e.message.type}</span>
        <span class="tokens">${count(tokensOf(ctx, e))} tokens</span>
        ${badges.map((b) => html`<span class="badge b-${b.replace(' ', '-')}">${b}</span>`)}
        ${options.highlight?.has(e.id) === true ? html`<span class="badge b-recalled">recalled</span>` : ''}
        <time>${time(e.timestamp)}</time>
        <code class="event-id">${e.id}</code>
      </div>
      ${content(textOf(e))}
      ${
        calls === undefined
          ? ''
          : html`<p class="pairing">
              ${calls.map((c) => html`<span>call <code>${c.name}</code> (${c.id}) → result ${ref(c.result)}</span> `)}
            </p>`
      }
      ${
        results === undefined
          ? ''
          : html`<p class="pairing">
              ${results.map((r) => html`<span>result of <code>${r.name}</code> (${r.id}) ← call ${ref(r.call)}</span> `)}
            </p>`
      }
      ${coverage}
    </li>`;
  });
  return html`<ol class="events">
    ${items}
  </ol>`;
}
