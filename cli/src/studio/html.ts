/**
 * HTML built from templates whose interpolations are escaped unless they are already Html: content from the
 * store (messages, ids, metadata) can never open a tag or an attribute, whatever it holds.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Text for an element body or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join('');
  return escapeHtml(String(value));
}

/** `html\`<td>${text}</td>\``: every interpolation escaped, Html and arrays of Html kept as they are. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** A query string from parameters; undefined and empty values are left out. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

/** Thousands separated, for token and event counts. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** An ISO time without milliseconds, or a dash. */
export function time(d: Date | null | undefined): string {
  return d === null || d === undefined
    ? '—'
    : d
        .toISOString()
        .replace(/\.\d{3}Z$/, 'Z')
        .replace('T', ' ');
}
