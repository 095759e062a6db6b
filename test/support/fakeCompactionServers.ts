/**
 * Loopback servers that speak the providers' native compaction wire formats, for end-to-end tests through the
 * real SDK clients (`openai`, `@anthropic-ai/sdk`). Non-streaming JSON only.
 *
 * OpenAI (`startFakeOpenAICompactionServer`):
 * - `POST /v1/responses/compact` `{ model, input }` → `{ id, object: 'response.compaction', created_at, output,
 *   usage }`, where `output` is every user message of the input (as output message items) followed by one
 *   `compaction` item `{ id, type: 'compaction', encrypted_content }` — as the API reference documents it;
 * - `POST /v1/responses` `{ model, input }` → a `response` with one assistant message;
 * - `POST /v1/chat/completions` → a chat completion.
 * Like the real API it refuses (400 `invalid_request_error`) a `compaction` input item whose
 * `encrypted_content` it did not issue, and any `compaction` item sent to Chat Completions (a message there has
 * no such type).
 *
 * Anthropic (`startFakeAnthropicCompactionServer`): `POST /v1/messages`. With `compaction: { type: 'summarize' }`
 * (beta `compact-2026-09-04` required) the reply holds one signed `compaction` block and `stop_reason:
 * 'compaction'`. Otherwise a text reply. Like the API it refuses (400, `error.details.error_code`) a compaction
 * block that is not the first block of the conversation (`compaction_block_misplaced`), more than one with
 * content (`compaction_block_ambiguous`), one whose signature does not verify (`compaction_signature_invalid`)
 * or whose content differs from what was signed (`compaction_content_mismatch`), and any compaction block
 * without the beta header.
 *
 * Each server records every request: the parsed body and the raw body text (for byte-exact checks). A queued
 * failure (`failNext(status)`) answers the next request of a route with that status and the provider's error body.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  raw: string;
  body: Record<string, unknown>;
}

export interface FakeCompactionServer {
  /** For OpenAI: ends in `/v1`; for Anthropic: the origin (the SDK appends `/v1/messages`). */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** The 400s sent, with their messages. */
  readonly rejections: string[];
  /** Answers the next request to `path` with `status` (and the provider's error body). */
  failNext(path: string, status: number): void;
  /** The compaction items (OpenAI) or blocks (Anthropic) issued, as sent, raw JSON text each. */
  readonly issued: string[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    handler(req, res).catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(error) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, raw: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(raw);
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

// -------------------------------------------------------------------------------------------------------------
// OpenAI

function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((c: Json) => (typeof c?.text === 'string' ? c.text : '')).join(' ');
}

export async function startFakeOpenAICompactionServer(): Promise<FakeCompactionServer> {
  const requests: RecordedRequest[] = [];
  const rejections: string[] = [];
  const issued: string[] = [];
  const issuedContent = new Set<string>();
  const failures = new Map<string, number[]>();
  let counter = 0;

  const reject = (res: ServerResponse, message: string) => {
    rejections.push(message);
    send(res, 400, JSON.stringify({ error: { message, type: 'invalid_request_error', param: 'input', code: 'invalid_value' } }));
  };

  /** The first compaction item whose encrypted content this server did not issue, if any. */
  const foreignCompaction = (items: unknown): string | null => {
    if (!Array.isArray(items)) return null;
    for (const item of items as Json[]) {
      if (item?.type !== 'compaction') continue;
      if (typeof item.encrypted_content !== 'string' || !issuedContent.has(item.encrypted_content)) {
        return 'The encrypted content of the compaction item could not be verified.';
      }
    }
    return null;
  };

  const { server, port } = await listen(async (req, res) => {
    const raw = await readBody(req);
    const path = (req.url ?? '').split('?')[0]!;
    const body = JSON.parse(raw) as Json;
    requests.push({ path, headers: req.headers, raw, body });
    const status = failures.get(path)?.shift();
    if (status !== undefined) {
      const type = status >= 500 ? 'server_error' : status === 429 ? 'rate_limit_exceeded' : 'invalid_request_error';
      return send(res, status, JSON.stringify({ error: { message: `fake ${status}`, type, param: null, code: null } }));
    }
    counter++;
    const usage = {
      input_tokens: 100 + counter,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 120 + counter,
    };
    if (path === '/v1/responses/compact') {
      const input = body.input;
      const foreign = foreignCompaction(input);
      if (foreign !== null) return reject(res, foreign);
      if (!Array.isArray(input) || input.length === 0) return reject(res, 'input must be a non-empty array');
      const userMessages = (input as Json[])
        .filter((item) => item.role === 'user' && (item.type === undefined || item.type === 'message'))
        .map((item, i) => ({
          id: `msg_c${counter}_${i}`,
          type: 'message',
          status: 'completed',
          role: 'user',
          content: typeof item.content === 'string' ? [{ type: 'input_text', text: item.content }] : item.content,
        }));
      const encrypted = `enc_${counter}_${Buffer.from(`${input.length} items`).toString('base64')}+/=\u00e9`;
      issuedContent.add(encrypted);
      const compaction = { id: `cmp_${counter}`, type: 'compaction', encrypted_content: encrypted, created_by: 'fake' };
      issued.push(JSON.stringify(compaction));
      const reply = {
        id: `resp_c${counter}`,
        object: 'response.compaction',
        created_at: 1_700_000_000 + counter,
        output: [...userMessages, compaction],
        usage,
      };
      return send(res, 200, JSON.stringify(reply));
    }
    if (path === '/v1/responses') {
      const foreign = foreignCompaction(body.input);
      if (foreign !== null) return reject(res, foreign);
      const reply = {
        id: `resp_${counter}`,
        object: 'response',
        created_at: 1_700_000_000 + counter,
        status: 'completed',
        model: body.model,
        output: [
          {
            id: `msg_${counter}`,
            type: 'message',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: `reply ${counter}`, annotations: [] }],
          },
        ],
        usage,
        parallel_tool_calls: true,
        tool_choice: 'auto',
        tools: [],
      };
      return send(res, 200, JSON.stringify(reply));
    }
    if (path === '/v1/chat/completions') {
      const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
      if (
        messages.some(
          (m) =>
            m.type === 'compaction' || (Array.isArray(m.content) && (m.content as Json[]).some((c) => c?.type === 'compaction')),
        )
      ) {
        return reject(
          res,
          "Invalid value: 'compaction'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio' and 'file'.",
        );
      }
      const reply = {
        id: `chatcmpl_${counter}`,
        object: 'chat.completion',
        created: 1_700_000_000 + counter,
        model: body.model,
        choices: [
          {
            index: 0,
            finish_reason: 'stop',
            message: { role: 'assistant', content: `reply ${counter}: ${textOfContent(messages.at(-1)?.content).slice(0, 20)}` },
          },
        ],
        usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 },
      };
      return send(res, 200, JSON.stringify(reply));
    }
    send(res, 404, JSON.stringify({ error: { message: `no route ${path}`, type: 'not_found' } }));
  });
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    rejections,
    issued,
    failNext: (path, status) => failures.set(path, [...(failures.get(path) ?? []), status]),
    close: () => close(server),
  };
}

// -------------------------------------------------------------------------------------------------------------
// Anthropic

const SIGNING_KEY = 'fake-anthropic-compaction-key';
/** Every signature this fake issued: a known signature over other content is a content mismatch. */
const signed = new Set<string>();
const hmac = (content: string) => createHmac('sha256', SIGNING_KEY).update(content).digest('base64');
const sign = (content: string) => {
  const signature = hmac(content);
  signed.add(signature);
  return signature;
};

/** The API's error for a compaction block it refuses, with the error code in `error.details`. */
function compactionBlockError(body: Json, betas: string[]): { code: string; message: string } | null {
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  let withContent = 0;
  let seenOther = false;
  for (const [m, message] of messages.entries()) {
    const blocks = Array.isArray(message.content) ? (message.content as Json[]) : [{ type: 'text' }];
    for (const [b, block] of blocks.entries()) {
      if (block.type !== 'compaction') {
        seenOther = true;
        continue;
      }
      if (!betas.includes('compact-2026-09-04')) {
        return {
          code: 'invalid_request',
          message: `messages.${m}.content.${b}: compaction blocks require the compact-2026-09-04 beta`,
        };
      }
      if (seenOther || m !== 0 || b !== 0 || message.role !== 'assistant') {
        return {
          code: 'compaction_block_misplaced',
          message: 'The compaction block must be the first block of the conversation.',
        };
      }
      if (typeof block.content === 'string') withContent++;
      if (typeof block.content === 'string' && block.signature !== hmac(block.content)) {
        return signed.has(String(block.signature))
          ? {
              code: 'compaction_content_mismatch',
              message: "The compaction block's content differs from the text its signature recorded.",
            }
          : { code: 'compaction_signature_invalid', message: "The compaction block's signature does not verify." };
      }
    }
  }
  if (withContent > 1)
    return { code: 'compaction_block_ambiguous', message: 'messages holds more than one compaction block with content.' };
  return null;
}

export async function startFakeAnthropicCompactionServer(): Promise<FakeCompactionServer> {
  const requests: RecordedRequest[] = [];
  const rejections: string[] = [];
  const issued: string[] = [];
  const failures = new Map<string, number[]>();
  let counter = 0;

  const error = (res: ServerResponse, status: number, type: string, message: string, code?: string) =>
    send(
      res,
      status,
      JSON.stringify({
        type: 'error',
        error: { type, message, ...(code !== undefined ? { details: { error_code: code } } : {}) },
      }),
    );

  const { server, port } = await listen(async (req, res) => {
    const raw = await readBody(req);
    const path = (req.url ?? '').split('?')[0]!;
    if (path !== '/v1/messages') return error(res, 404, 'not_found_error', `no route ${path}`);
    const body = JSON.parse(raw) as Json;
    requests.push({ path, headers: req.headers, raw, body });
    const status = failures.get(path)?.shift();
    if (status !== undefined) {
      const type =
        status === 529
          ? 'overloaded_error'
          : status >= 500
            ? 'api_error'
            : status === 429
              ? 'rate_limit_error'
              : 'invalid_request_error';
      return error(res, status, type, `fake ${status}`);
    }
    const betas = String(req.headers['anthropic-beta'] ?? '')
      .split(',')
      .map((b) => b.trim())
      .filter((b) => b !== '');
    const invalid = compactionBlockError(body, betas);
    if (invalid !== null) {
      rejections.push(invalid.code);
      return error(res, 400, 'invalid_request_error', invalid.message, invalid.code);
    }
    if (typeof body.max_tokens !== 'number') return error(res, 400, 'invalid_request_error', 'max_tokens: Field required');
    counter++;
    const messages = (body.messages ?? []) as Json[];
    const usage = { input_tokens: 200 + counter, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const compaction = body.compaction as Json | undefined;
    if (compaction !== undefined && compaction !== null) {
      if (!betas.includes('compact-2026-09-04'))
        return error(res, 400, 'invalid_request_error', 'compaction: requires the compact-2026-09-04 beta');
      if (compaction.type !== 'summarize')
        return error(res, 400, 'invalid_request_error', "compaction.type: must be 'summarize'");
      if (messages.length === 0) {
        return error(res, 400, 'invalid_request_error', 'Nothing to summarize.', 'compaction_nothing_to_summarize');
      }
      const summary = `Compacted ${messages.length} messages (${counter}).`;
      const block = { type: 'compaction', content: summary, encrypted_content: null, signature: sign(summary) };
      issued.push(JSON.stringify(block));
      const reply = {
        id: `msg_c${counter}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [block],
        stop_reason: 'compaction',
        stop_sequence: null,
        usage: {
          ...usage,
          iterations: [
            {
              type: 'compaction',
              input_tokens: 180,
              output_tokens: 25,
              cache_creation_input_tokens: 0,
              cache_read_input_tokens: 0,
              cache_creation: null,
            },
          ],
        },
      };
      return send(res, 200, JSON.stringify(reply));
    }
    const reply = {
      id: `msg_${counter}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: [{ type: 'text', text: `reply ${counter}`, citations: null }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage,
    };
    send(res, 200, JSON.stringify(reply));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    rejections,
    issued,
    failNext: (path, status) => failures.set(path, [...(failures.get(path) ?? []), status]),
    close: () => close(server),
  };
}
