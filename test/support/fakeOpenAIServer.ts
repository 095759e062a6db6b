/**
 * A loopback OpenAI-compatible server for end-to-end tests through the real `openai` SDK.
 *
 * Speaks `POST /v1/chat/completions`, non-streaming JSON and `stream: true` SSE (chunks ending with
 * `data: [DONE]`, plus a usage chunk when `stream_options.include_usage` is set). Each request takes the
 * next enqueued reply, or else the default responder's reply. Every parsed request body is recorded.
 *
 * With `{ strict: true }` it answers 400 like the real API on a request whose tool messages are not paired:
 * a `tool` message that does not answer a call of the assistant message before its run of tool messages, a
 * second `tool` message for one call, or an assistant `tool_calls` entry without its `tool` message right after.
 *
 * It also speaks the Responses API (`POST /v1/responses`, JSON and SSE ending in `response.completed`), with
 * reasoning items (encrypted content included) and function calls; in strict mode a `function_call_output`
 * without its `function_call`, a second output for one call, or a `function_call` without its output, gets
 * the API's 400. Item ids are
 * derived from the reply, so the same reply gets the same ids streamed or not.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeToolCall {
  id?: string;
  name: string;
  /** JSON text, as the API sends it. */
  arguments: string;
}

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** Sent as `prompt_tokens_details.cached_tokens`: the part of the prompt read from the provider's cache. */
  cached_tokens?: number;
}

export interface FakeReply {
  content?: string | null;
  toolCalls?: FakeToolCall[];
  /** HTTP status; non-2xx replies send an OpenAI-style error body unless `rawBody` is set. */
  status?: number;
  headers?: Record<string, string>;
  /** Wait this long before sending anything (for timeout tests). */
  delayMs?: number;
  /** Streaming: wait this long after each content chunk (for tests that abort mid-stream). */
  chunkDelayMs?: number;
  /** Streaming: drop the connection after this many content chunks (a stream that fails half way). */
  breakAfterChunks?: number;
  /** Sent verbatim instead of a generated body (for malformed-JSON tests). */
  rawBody?: string;
  /** Defaults to a rough count (characters / 4) of the request messages and the reply. */
  usage?: FakeUsage;
  /** Responses API only: a reasoning item (summary text, with encrypted content) before the output. */
  reasoning?: string;
  finishReason?: string;
}

/** The request body as the server parsed it (`messages`, `model`, `stream`, ... ). */
export type FakeRequestBody = Record<string, unknown> & {
  model?: string;
  messages?: Array<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
};

export type FakeResponder = (body: FakeRequestBody) => FakeReply | Promise<FakeReply>;

export interface FakeOpenAIServer {
  /** Base URL ending in `/v1`, for `new OpenAI({ baseURL })`. */
  readonly url: string;
  /** The 400s a strict server sent, with the validation message. */
  readonly rejections: string[];
  /** Every parsed request body, in arrival order (including retried ones). */
  readonly requests: FakeRequestBody[];
  /** Request headers, parallel to `requests`. */
  readonly requestHeaders: IncomingMessage['headers'][];
  /** Queue a reply for the next request that has no earlier queued reply. */
  enqueue(...replies: FakeReply[]): void;
  /** Default reply when the queue is empty (initially: content "fake summary"). */
  respondWith(responder: FakeResponder): void;
  /** Every parsed `POST /v1/embeddings` body (`model`, `input`, `dimensions` ...), in arrival order. */
  readonly embeddingRequests: Array<Record<string, unknown> & { input?: string[]; model?: string }>;
  /**
   * How `/v1/embeddings` answers: a vector per input (default `bagOfWordsVector`), or an HTTP status to fail
   * with. The response lists the vectors in reverse order with their `index`, as clients must not rely on order.
   */
  embedWith(embedder: (input: string) => number[] | number): void;
  close(): Promise<void>;
}

/** A deterministic stand-in for an embedding model: word counts hashed into `dimensions` buckets. */
export function bagOfWordsVector(text: string, dimensions = 64): number[] {
  const v = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    let h = 2166136261;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
    v[(h >>> 0) % dimensions]! += 1;
  }
  return v;
}

const roughTokens = (value: unknown): number => Math.ceil(JSON.stringify(value ?? '').length / 4);

/** The Chat Completions API's pairing checks, with its error messages. Null when the request is valid. */
export function openAIPairingError(body: FakeRequestBody): string | null {
  const messages = body.messages ?? [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'tool') {
      let j = i - 1;
      while (j >= 0 && messages[j]!.role === 'tool') j--;
      const calls = (messages[j]?.role === 'assistant' ? ((messages[j]!.tool_calls as Array<{ id: string }>) ?? []) : []).map(
        (c) => c.id,
      );
      if (!calls.includes(m.tool_call_id ?? '')) {
        return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`;
      }
      for (let k = j + 1; k < i; k++) {
        if (messages[k]!.tool_call_id === m.tool_call_id) {
          return `Invalid parameter: more than one message with role 'tool' responds to tool_call_id ${m.tool_call_id}.`;
        }
      }
    } else if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      const answered = new Set<string>();
      for (let j = i + 1; j < messages.length && messages[j]!.role === 'tool'; j++) answered.add(messages[j]!.tool_call_id ?? '');
      const missing = (m.tool_calls as Array<{ id: string }>).map((c) => c.id).filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`;
      }
    }
  }
  return null;
}

/** The Responses API's pairing checks, with its error messages. Null when the request is valid. */
export function responsesPairingError(body: FakeRequestBody): string | null {
  const input = Array.isArray(body.input) ? (body.input as Array<Record<string, unknown>>) : [];
  const calls = new Set<string>();
  const outputs = new Set<string>();
  for (const item of input) {
    if (item.type === 'function_call') calls.add(String(item.call_id));
    if (item.type === 'function_call_output') {
      if (!calls.has(String(item.call_id)))
        return `No tool call found for function call output with call_id ${String(item.call_id)}.`;
      if (outputs.has(String(item.call_id))) return `Duplicate function call output for call_id ${String(item.call_id)}.`;
      outputs.add(String(item.call_id));
    }
  }
  for (const id of calls) if (!outputs.has(id)) return `No tool output found for function call ${id}.`;
  return null;
}

export interface FakeOpenAIServerOptions {
  /** Reject unpaired tool messages with a 400, as the real API does. */
  strict?: boolean;
}

export async function startFakeOpenAIServer(options: FakeOpenAIServerOptions = {}): Promise<FakeOpenAIServer> {
  const rejections: string[] = [];
  const queue: FakeReply[] = [];
  const requests: FakeRequestBody[] = [];
  const requestHeaders: IncomingMessage['headers'][] = [];
  let responder: FakeResponder = () => ({ content: 'fake summary' });
  const embeddingRequests: FakeOpenAIServer['embeddingRequests'] = [];
  let embedder: (input: string) => number[] | number = (input) => bagOfWordsVector(input);
  let counter = 0;
  const pending = new Set<NodeJS.Timeout>();

  const sleep = (ms: number, res: ServerResponse) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        pending.delete(timer);
        resolve();
      }, ms);
      pending.add(timer);
      res.on('close', () => {
        clearTimeout(timer);
        pending.delete(timer);
        resolve();
      });
    });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'POST' && path === '/v1/embeddings') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> & { input?: string[] };
      embeddingRequests.push(body);
      const inputs = Array.isArray(body.input) ? body.input : [String(body.input)];
      const vectors = inputs.map((input) => embedder(input));
      const failed = vectors.find((v): v is number => typeof v === 'number');
      if (failed !== undefined) {
        res.writeHead(failed, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `fake error ${failed}`, type: 'server_error', code: null } }));
        return;
      }
      const data = vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })).reverse();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data,
          model: body.model,
          usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
        }),
      );
      return;
    }
    const responsesApi = path === '/v1/responses';
    if (req.method !== 'POST' || (path !== '/v1/chat/completions' && !responsesApi)) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: 'not_found' } }));
      return;
    }
    let body: FakeRequestBody;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as FakeRequestBody;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'request body is not JSON', type: 'invalid_request_error' } }));
      return;
    }
    requests.push(body);
    requestHeaders.push(req.headers);
    const invalid = options.strict ? (responsesApi ? responsesPairingError(body) : openAIPairingError(body)) : null;
    if (invalid !== null) {
      rejections.push(invalid);
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: invalid, type: 'invalid_request_error', param: 'messages', code: null } }));
      return;
    }
    const reply = queue.shift() ?? (await responder(body));
    if (reply.delayMs) await sleep(reply.delayMs, res);
    if (res.destroyed || res.writableEnded) return;

    const status = reply.status ?? 200;
    const headers = { ...reply.headers };
    if (reply.rawBody !== undefined) {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(reply.rawBody);
      return;
    }
    if (status >= 300) {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify({ error: { message: `fake error ${status}`, type: 'server_error', code: null } }));
      return;
    }

    counter += 1;
    if (responsesApi) {
      sendResponse(res, body, reply);
      return;
    }
    const id = `chatcmpl-fake-${counter}`;
    const created = Math.floor(Date.now() / 1000);
    const model = body.model ?? 'fake-model';
    const content = reply.content === undefined ? 'fake summary' : reply.content;
    const toolCalls = reply.toolCalls?.map((call, index) => ({
      index,
      id: call.id ?? `call_${counter}_${index}`,
      type: 'function' as const,
      function: { name: call.name, arguments: call.arguments },
    }));
    const usage = reply.usage ?? {
      prompt_tokens: roughTokens(body.messages),
      completion_tokens: roughTokens(content) + roughTokens(toolCalls ?? ''),
    };
    const { cached_tokens: cachedTokens, ...counts } = usage;
    const fullUsage = {
      ...counts,
      total_tokens: usage.prompt_tokens + usage.completion_tokens,
      ...(cachedTokens !== undefined ? { prompt_tokens_details: { cached_tokens: cachedTokens } } : {}),
    };
    const finishReason = reply.finishReason ?? (toolCalls?.length ? 'tool_calls' : 'stop');

    if (body.stream) {
      res.writeHead(status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
      const send = (payload: unknown) => res.write(`data: ${JSON.stringify(payload)}\n\n`);
      const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finish }],
      });
      send(chunk({ role: 'assistant', content: '' }, null));
      if (content) {
        // Several deltas, so clients must concatenate.
        const parts = content.match(/[\s\S]{1,8}/g) ?? [];
        for (const [i, part] of parts.entries()) {
          if (reply.breakAfterChunks !== undefined && i >= reply.breakAfterChunks) {
            // Let what was written reach the client first: the failure is half way, not at the start.
            await sleep(50, res);
            res.destroy();
            return;
          }
          send(chunk({ content: part }, null));
          if (reply.chunkDelayMs) {
            await sleep(reply.chunkDelayMs, res);
            if (res.destroyed) return;
          }
        }
      }
      if (toolCalls) {
        for (const call of toolCalls) {
          send(chunk({ tool_calls: [{ ...call, function: { name: call.function.name, arguments: '' } }] }, null));
          send(chunk({ tool_calls: [{ index: call.index, function: { arguments: call.function.arguments } }] }, null));
        }
      }
      send(chunk({}, finishReason));
      if (body.stream_options?.include_usage) {
        send({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: fullUsage });
      }
      res.end('data: [DONE]\n\n');
      return;
    }

    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content,
              refusal: null,
              ...(toolCalls ? { tool_calls: toolCalls.map(({ index: _index, ...rest }) => rest) } : {}),
            },
            finish_reason: finishReason,
            logprobs: null,
          },
        ],
        usage: fullUsage,
      }),
    );
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(error), type: 'fake_server_failure' } }));
    });
  });
  // Clients reuse kept-alive sockets: on a loaded machine a turn's first (cold) compaction can outlast Node's
  // 5 s default, and the client's next request then meets a socket the server just closed (ECONNRESET).
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    rejections,
    requests,
    requestHeaders,
    enqueue: (...replies) => queue.push(...replies),
    respondWith: (next) => {
      responder = next;
    },
    embeddingRequests,
    embedWith: (next) => {
      embedder = next;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of pending) clearTimeout(timer);
        pending.clear();
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

const stableId = (prefix: string, value: unknown) =>
  `${prefix}_${createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16)}`;

/** A Responses API answer for `reply`: JSON, or SSE events ending in `response.completed`. */
function sendResponse(res: ServerResponse, body: FakeRequestBody, reply: FakeReply): void {
  const output: Array<Record<string, unknown>> = [];
  if (reply.reasoning !== undefined) {
    output.push({
      type: 'reasoning',
      id: stableId('rs', reply.reasoning),
      summary: [{ type: 'summary_text', text: reply.reasoning }],
      encrypted_content: `enc:${Buffer.from(reply.reasoning).toString('base64')}`,
    });
  }
  const content = reply.content === undefined ? 'fake summary' : reply.content;
  if (content !== null) {
    output.push({
      type: 'message',
      id: stableId('msg', content),
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: content, annotations: [] }],
    });
  }
  for (const call of reply.toolCalls ?? []) {
    const callId = call.id ?? stableId('call', call);
    output.push({
      type: 'function_call',
      id: stableId('fc', callId),
      call_id: callId,
      name: call.name,
      arguments: call.arguments,
      status: 'completed',
    });
  }
  const inputTokens = reply.usage?.prompt_tokens ?? roughTokens(body.input);
  const outputTokens = reply.usage?.completion_tokens ?? roughTokens(output);
  const response = {
    id: stableId('resp', [body.input, output]),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    model: body.model ?? 'fake-model',
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    },
  };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(response));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sequence = 0;
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  send('response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } });
  for (const [index, item] of output.entries()) {
    send('response.output_item.added', { output_index: index, item });
    if (item.type === 'message') {
      for (const delta of content?.match(/[\s\S]{1,8}/g) ?? []) {
        send('response.output_text.delta', { item_id: item.id, output_index: index, content_index: 0, delta });
      }
    }
    send('response.output_item.done', { output_index: index, item });
  }
  send('response.completed', { response });
  res.end();
}
