import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidArgumentError } from 'session-compaction';
import { STUDIO_CSS, STUDIO_JS } from './assets.js';
import { html, type Html } from './html.js';
import { notice, page } from './layout.js';
import { StudioError } from './sessionData.js';
import type { StudioContext, ViewRequest } from './StudioContext.js';
import { compactionsView, revertAction } from './views/compactionsView.js';
import { healthView } from './views/healthView.js';
import { applyAction, previewView } from './views/previewView.js';
import { promptView } from './views/promptView.js';
import { sessionsView } from './views/sessionsView.js';
import { timelineView } from './views/timelineView.js';

/** The only address the studio listens on: it is a local tool, never a server for a network. */
export const STUDIO_HOST = '127.0.0.1';

const MAX_FORM_BYTES = 64 * 1024;

type View = (ctx: StudioContext, req: ViewRequest) => Promise<Html>;
type Action = (ctx: StudioContext, req: ViewRequest) => Promise<string>;

const VIEWS: Record<string, View> = {
  '/': sessionsView,
  '/session': timelineView,
  '/compactions': compactionsView,
  '/prompt': promptView,
  '/preview': previewView,
  '/health': healthView,
};

const ACTIONS: Record<string, Action> = {
  '/compactions/revert': revertAction,
  '/preview/apply': applyAction,
};

const ASSETS: Record<string, [string, string]> = {
  '/assets/studio.css': ['text/css; charset=utf-8', STUDIO_CSS],
  '/assets/studio.js': ['text/javascript; charset=utf-8', STUDIO_JS],
};

/** Every response: nothing inline runs, nothing frames the page, nothing is cached or leaks through Referer. */
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // same-origin, not no-referrer: with no-referrer a form post's Origin is 'null', and the origin check needs it.
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

function sameSecret(given: string | null | undefined, secret: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new StudioError(415, 'a form post is expected');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw new StudioError(413, 'the form is too large');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export interface StudioServerOptions {
  /** 0 (default): a free port chosen by the system. */
  port?: number;
  /** The access token; default 32 random bytes. Tests pass their own. */
  token?: string;
}

/**
 * The studio's HTTP server on 127.0.0.1. Every request needs the access token (the `token` parameter of the
 * printed URL, which sets an HttpOnly SameSite=Strict cookie and redirects to the URL without it; or the
 * `X-Studio-Token` header); the Host header must name the loopback address (DNS rebinding); writes are POST
 * forms carrying the CSRF token, refused unless the studio was started with --allow-writes.
 */
export class StudioServer {
  readonly token: string;
  readonly csrfToken = randomBytes(24).toString('base64url');
  private readonly server: Server;
  private port = 0;

  constructor(
    private readonly ctx: StudioContext,
    private readonly options: StudioServerOptions = {},
  ) {
    this.token = options.token ?? randomBytes(32).toString('base64url');
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  get cookieName(): string {
    // Cookies are not kept apart by port: two studios on one machine must not share one.
    return `sc_studio_${this.port}`;
  }

  /** Listens on 127.0.0.1; returns the URL to open (with the token). */
  async start(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port ?? 0, STUDIO_HOST, () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    return `${this.origin}/?token=${this.token}`;
  }

  get origin(): string {
    return `http://${STUDIO_HOST}:${this.port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private send(
    res: ServerResponse,
    status: number,
    body: string,
    type = 'text/html; charset=utf-8',
    extra: Record<string, string> = {},
  ) {
    res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': type, ...extra });
    res.end(body);
  }

  private refuse(res: ServerResponse, status: number, message: string): void {
    this.send(res, status, `${message}\n`, 'text/plain; charset=utf-8');
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const host = req.headers.host ?? '';
      if (host !== `${STUDIO_HOST}:${this.port}` && host !== `localhost:${this.port}`) {
        return this.refuse(res, 403, 'forbidden: the studio answers only on its loopback address');
      }
      const url = new URL(req.url ?? '/', this.origin);
      const method = req.method ?? 'GET';
      const fromUrl = url.searchParams.get('token');
      if (fromUrl !== null && (method === 'GET' || method === 'HEAD')) {
        if (!sameSecret(fromUrl, this.token)) return this.refuse(res, 403, 'forbidden: wrong access token');
        url.searchParams.delete('token');
        const cookie = `${this.cookieName}=${this.token}; HttpOnly; SameSite=Strict; Path=/`;
        // The token leaves the address bar (and the history) at once; the cookie carries it from now on.
        return this.send(res, 303, '', 'text/plain', { 'Set-Cookie': cookie, Location: `${url.pathname}${url.search}` });
      }
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const given =
        cookieValue(req.headers.cookie, this.cookieName) ?? (req.headers['x-studio-token'] as string | undefined) ?? bearer;
      if (!sameSecret(given, this.token)) {
        return this.refuse(res, 403, 'forbidden: open the URL the studio printed (it carries the access token)');
      }
      const asset = ASSETS[url.pathname];
      if (asset !== undefined && method === 'GET') return this.send(res, 200, asset[1], asset[0]);
      if (url.pathname === '/favicon.ico') return this.send(res, 204, '', 'image/x-icon');
      const view = VIEWS[url.pathname];
      const action = ACTIONS[url.pathname];
      if (view !== undefined && (method === 'GET' || method === 'HEAD')) {
        const body = await view(this.ctx, { params: url.searchParams, csrfToken: this.csrfToken });
        return this.send(res, 200, method === 'HEAD' ? '' : body.value);
      }
      if (action !== undefined && method === 'POST') {
        const origin = req.headers.origin;
        if (origin !== undefined && origin !== this.origin && origin !== `http://localhost:${this.port}`) {
          return this.refuse(res, 403, 'forbidden: a write from another origin');
        }
        const form = await readForm(req);
        if (!sameSecret(form.get('csrf'), this.csrfToken)) return this.refuse(res, 403, 'forbidden: missing or wrong CSRF token');
        if (!this.ctx.allowWrites)
          return this.refuse(res, 403, 'forbidden: the studio is read-only (start it with --allow-writes)');
        const location = await action(this.ctx, { params: form, csrfToken: this.csrfToken });
        return this.send(res, 303, '', 'text/plain', { Location: location });
      }
      if (view !== undefined || action !== undefined) {
        return this.send(res, 405, 'method not allowed\n', 'text/plain; charset=utf-8', {
          Allow: view !== undefined ? 'GET, HEAD' : 'POST',
        });
      }
      return this.errorPage(res, 404, `no page ${url.pathname}`);
    } catch (error) {
      const status = error instanceof StudioError ? error.status : error instanceof InvalidArgumentError ? 400 : 500;
      if (status === 500) this.ctx.logger.error('studio request failed', { url: req.url, error: String(error) });
      const message = error instanceof Error ? error.message : String(error);
      if (!res.headersSent) this.errorPage(res, status, message);
      else res.end();
    }
  }

  private errorPage(res: ServerResponse, status: number, message: string): void {
    const body = page(this.ctx, {
      title: `Error ${status}`,
      body: html`<h1>Error ${status}</h1>
        ${notice('error', message)}`,
    });
    this.send(res, status, body.value);
  }
}
