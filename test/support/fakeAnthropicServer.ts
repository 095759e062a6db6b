/**
 * A loopback Anthropic Messages API for end-to-end tests through the real `@anthropic-ai/sdk` client.
 *
 * Speaks `POST /v1/messages`, non-streaming JSON and `stream: true` SSE (message_start, content blocks with
 * text / input_json / thinking / signature deltas, message_delta, message_stop). Each request takes the next
 * enqueued reply, or else the default responder's. Every parsed request body is recorded.
 *
 * Like the real API it answers 400 `invalid_request_error` on a request it would reject: a `tool_use` without
 * its `tool_result` in the next message, a `tool_result` without its `tool_use` in the previous message, two
 * `tool_result` blocks for one `tool_use`,
 * tool results after other content, a thinking block without a signature, an empty text block, a missing
 * `max_tokens`, more than 4 `cache_control` breakpoints. Consecutive messages of one role are combined first, as the API does.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeAnthropicBlock {
  type: string;
  [key: string]: unknown;
}

export interface FakeAnthropicMessage {
  role: string;
  content: string | FakeAnthropicBlock[];
}

export type FakeAnthropicRequest = Record<string, unknown> & {
  model?: string;
  system?: string | FakeAnthropicBlock[];
  messages?: FakeAnthropicMessage[];
  max_tokens?: number;
  stream?: boolean;
};

export interface FakeAnthropicReply {
  text?: string;
  /** Emitted first, with this signature (default a fixed string). */
  thinking?: string;
  signature?: string;
  toolUses?: Array<{ id?: string; name: string; input: Record<string, unknown> }>;
  status?: number;
  stopReason?: string;
  usage?: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
}

export type FakeAnthropicResponder = (body: FakeAnthropicRequest) => FakeAnthropicReply | Promise<FakeAnthropicReply>;

export interface FakeAnthropicServer {
  /** Base URL for `new Anthropic({ baseURL })` (the SDK appends `/v1/messages`). */
  readonly url: string;
  readonly requests: FakeAnthropicRequest[];
  /** The 400s sent, with the validation message. */
  readonly rejections: string[];
  enqueue(...replies: FakeAnthropicReply[]): void;
  respondWith(responder: FakeAnthropicResponder): void;
  close(): Promise<void>;
}

export interface FakeAnthropicOptions {
  /** Input tokens reported for a request; default characters / 4 of system and messages. */
  countTokens?: (body: FakeAnthropicRequest) => number;
}

const blocksOf = (content: string | FakeAnthropicBlock[]): FakeAnthropicBlock[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : content;

/** `cache_control` breakpoints in a request: top level, tools, system and message blocks (nested ones too). */
export function cacheBreakpointCount(body: FakeAnthropicRequest): number {
  const count = (value: unknown): number => {
    if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + count(v), 0);
    if (value === null || typeof value !== 'object') return 0;
    const { cache_control, content, source } = value as Record<string, unknown>;
    return (cache_control === undefined || cache_control === null ? 0 : 1) + count(content) + count(source);
  };
  const top = body.cache_control === undefined || body.cache_control === null ? 0 : 1;
  const system = Array.isArray(body.system) ? count(body.system) : 0;
  return top + count(body.tools ?? []) + system + count(body.messages ?? []);
}

/** The API's own checks of a request, after combining consecutive turns of one role. Null when valid. */
export function anthropicRequestError(body: FakeAnthropicRequest): string | null {
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  const breakpoints = cacheBreakpointCount(body);
  if (breakpoints > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`;
  const raw = body.messages;
  if (!Array.isArray(raw) || raw.length === 0) return 'messages: at least one message is required';
  const messages: Array<{ role: string; blocks: FakeAnthropicBlock[] }> = [];
  for (const m of raw) {
    if (m.role !== 'user' && m.role !== 'assistant') return `messages: unexpected role "${m.role}"`;
    const last = messages[messages.length - 1];
    if (last !== undefined && last.role === m.role) last.blocks.push(...blocksOf(m.content));
    else messages.push({ role: m.role, blocks: [...blocksOf(m.content)] });
  }
  for (const [i, m] of messages.entries()) {
    for (const [j, b] of m.blocks.entries()) {
      if (b.type === 'text' && (typeof b.text !== 'string' || b.text === '')) {
        return `messages.${i}.content.${j}: text content blocks must be non-empty`;
      }
      if (b.type === 'thinking' && (typeof b.signature !== 'string' || b.signature === '')) {
        return `messages.${i}.content.${j}.thinking.signature: Field required`;
      }
      if ((b.type === 'thinking' || b.type === 'redacted_thinking' || b.type === 'tool_use') && m.role !== 'assistant') {
        return `messages.${i}.content.${j}: \`${b.type}\` blocks are only allowed in assistant messages`;
      }
      if (b.type === 'tool_result' && m.role !== 'user') {
        return `messages.${i}.content.${j}: \`tool_result\` blocks are only allowed in user messages`;
      }
    }
    if (m.role === 'user') {
      const firstOther = m.blocks.findIndex((b) => b.type !== 'tool_result');
      const lastResult = m.blocks.map((b) => b.type).lastIndexOf('tool_result');
      if (firstOther >= 0 && lastResult > firstOther) {
        return `messages.${i}: \`tool_result\` blocks must come before any other content in a user message`;
      }
      const previous = messages[i - 1];
      const uses = new Set(
        (previous?.role === 'assistant' ? previous.blocks : []).filter((b) => b.type === 'tool_use').map((b) => b.id),
      );
      const answered = new Set<unknown>();
      for (const [j, b] of m.blocks.entries()) {
        if (b.type === 'tool_result' && answered.has(b.tool_use_id)) {
          return `messages.${i}: each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${String(b.tool_use_id)}`;
        }
        if (b.type === 'tool_result') answered.add(b.tool_use_id);
        if (b.type === 'tool_result' && !uses.has(b.tool_use_id)) {
          return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(b.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
      }
    } else {
      const ids = m.blocks.filter((b) => b.type === 'tool_use').map((b) => String(b.id));
      if (ids.length === 0) continue;
      const next = messages[i + 1];
      const answered = new Set(
        (next?.role === 'user' ? next.blocks : []).filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id),
      );
      const missing = ids.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    }
  }
  return null;
}

const roughTokens = (body: FakeAnthropicRequest) =>
  Math.ceil(JSON.stringify([body.system ?? '', body.messages ?? []]).length / 4);

export async function startFakeAnthropicServer(options: FakeAnthropicOptions = {}): Promise<FakeAnthropicServer> {
  const queue: FakeAnthropicReply[] = [];
  const requests: FakeAnthropicRequest[] = [];
  const rejections: string[] = [];
  let responder: FakeAnthropicResponder = () => ({ text: 'fake reply' });
  let counter = 0;
  const countTokens = options.countTokens ?? roughTokens;

  const sendJson = (res: ServerResponse, status: number, payload: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(payload));
  };
  const error = (res: ServerResponse, status: number, type: string, message: string) =>
    sendJson(res, status, { type: 'error', error: { type, message } });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || path !== '/v1/messages')
      return error(res, 404, 'not_found_error', `no route ${req.method} ${req.url}`);
    let body: FakeAnthropicRequest;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as FakeAnthropicRequest;
    } catch {
      return error(res, 400, 'invalid_request_error', 'request body is not JSON');
    }
    requests.push(body);
    const invalid = anthropicRequestError(body);
    if (invalid !== null) {
      rejections.push(invalid);
      return error(res, 400, 'invalid_request_error', invalid);
    }
    const reply = queue.shift() ?? (await responder(body));
    if (reply.status !== undefined && reply.status >= 300)
      return error(res, reply.status, 'api_error', `fake error ${reply.status}`);

    counter += 1;
    const content: Array<Record<string, unknown>> = [];
    if (reply.thinking !== undefined) {
      content.push({ type: 'thinking', thinking: reply.thinking, signature: reply.signature ?? `sig-${counter}` });
    }
    if (reply.text !== undefined) content.push({ type: 'text', text: reply.text, citations: null });
    for (const [index, use] of (reply.toolUses ?? []).entries()) {
      content.push({
        type: 'tool_use',
        id: use.id ?? `toolu_${counter}_${index}`,
        name: use.name,
        input: use.input,
        caller: { type: 'direct' },
      });
    }
    const usage = {
      input_tokens: countTokens(body),
      output_tokens: Math.ceil(JSON.stringify(content).length / 4),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      ...reply.usage,
    };
    const stopReason = reply.stopReason ?? ((reply.toolUses?.length ?? 0) > 0 ? 'tool_use' : 'end_turn');
    const message = {
      id: `msg_fake_${counter}`,
      type: 'message',
      role: 'assistant',
      model: body.model ?? 'fake-model',
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      container: null,
      diagnostics: null,
      usage,
    };
    if (!body.stream) return sendJson(res, 200, message);

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (event: string, data: Record<string, unknown>) =>
      res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    send('message_start', { message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
    const pieces = (text: string) => text.match(/[\s\S]{1,7}/g) ?? [];
    for (const [index, block] of content.entries()) {
      if (block.type === 'thinking') {
        send('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
        for (const p of pieces(block.thinking as string))
          send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: p } });
        send('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
      } else if (block.type === 'text') {
        send('content_block_start', { index, content_block: { type: 'text', text: '', citations: null } });
        for (const p of pieces(block.text as string))
          send('content_block_delta', { index, delta: { type: 'text_delta', text: p } });
      } else {
        send('content_block_start', { index, content_block: { ...block, input: {} } });
        for (const p of pieces(JSON.stringify(block.input))) {
          send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: p } });
        }
      }
      send('content_block_stop', { index });
    }
    send('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    send('message_stop', {});
    res.end();
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((failure: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: String(failure) } }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    rejections,
    enqueue: (...replies) => queue.push(...replies),
    respondWith: (next) => {
      responder = next;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((failure) => (failure ? reject(failure) : resolve()));
      }),
  };
}
