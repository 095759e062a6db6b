import { randomUUID } from 'node:crypto';
import type { Container } from 'inversify';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { ChatCompletionMessage, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import {
  IllegalStateError,
  InvalidArgumentError,
  RepositoryConnectionError,
  TYPES,
  type CompactionResult,
  type RecallTools,
  type SessionEvent,
  type SessionMemoryResponse,
  type SessionRepository,
  type SessionService,
} from 'session-compaction';
import { accessDeniedMessage, isErasureRepository, ownerHash } from 'session-compaction/spi';
import type { OpenAIChatTypes, OpenAISessionMemory } from 'session-compaction/openai';
import type { ChatServerConfig } from './config.js';
import { APP_TYPES } from './container.js';

/**
 * A stand-in for real authentication: the user id comes from this header. In production, take it from your
 * verified session or token (never from the request body), exactly where this function reads the header.
 */
export const USER_HEADER = 'x-user-id';

interface QueryBody {
  conversation_id?: string;
  query: string;
}

const queryBodySchema = {
  type: 'object',
  required: ['query'],
  properties: {
    conversation_id: { type: 'string', minLength: 1, maxLength: 200 },
    query: { type: 'string', minLength: 1 },
  },
  additionalProperties: false,
} as const;

class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

function userOf(request: FastifyRequest): string {
  const value = request.headers[USER_HEADER];
  if (typeof value !== 'string' || value.trim() === '') throw new HttpError(401, `missing ${USER_HEADER} header`);
  return value.trim();
}

/**
 * The library's refusals of a deleted session id ("Session <id> was deleted at …", "Session not found: <id>
 * (deleted at …)") name when it was deleted: never sent to a client as they are (see refuseDeleted).
 */
function isDeletedSession(error: unknown): boolean {
  return (
    (error instanceof IllegalStateError && /^Session .* was deleted/.test(error.message)) ||
    (error instanceof InvalidArgumentError && /^Session not found: .* \(deleted at /.test(error.message))
  );
}

function statusOf(error: unknown): number {
  if (error instanceof HttpError) return error.statusCode;
  if (isDeletedSession(error)) return 404;
  // fastify's own refusals: 400 malformed JSON or a body that fails the schema, 413 too large, 415 not JSON.
  const status = (error as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return status;
  // The session store is unreachable for a moment (a failover, a restart): the client may retry.
  if (error instanceof RepositoryConnectionError) return 503;
  if (error instanceof IllegalStateError && error.message.endsWith('Access denied.')) return 403;
  if (error instanceof InvalidArgumentError) return 400;
  return 502;
}

const compactionJson = (result: CompactionResult | undefined) =>
  result === undefined ? null : { events_archived: result.eventsRemoved, tokens_saved: result.tokensEstimatedSaved };

function eventJson(e: SessionEvent) {
  const m = e.message;
  return {
    id: e.id,
    type: e.messageType,
    text: e.text,
    timestamp: e.timestamp.toISOString(),
    archived: e.isArchived(),
    synthetic: e.isSynthetic(),
    branch: e.branch,
    ...(m.type === 'assistant' && m.toolCalls ? { tool_calls: m.toolCalls } : {}),
    ...(m.type === 'tool' ? { tool_responses: m.responses } : {}),
  };
}

/** Builds the HTTP app; every handler resolves its services from the container. */
export function buildChatServer(container: Container): FastifyInstance {
  const config = container.get<ChatServerConfig>(APP_TYPES.Config);
  const app = Fastify({
    logger: false,
    bodyLimit: config.maxBodyBytes ?? 256 * 1024,
    // A body is valid as sent or refused: no coercing 42 into "42", no silently dropping unknown fields.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false } },
  });
  // JSON only: any other content type is answered 415.
  app.removeContentTypeParser('text/plain');
  const sessions = () => container.get<SessionService>(TYPES.SessionService);
  const memory = () => container.get<OpenAISessionMemory>(APP_TYPES.SessionMemory);
  const recall = () => container.get<RecallTools>(APP_TYPES.RecallTools);

  app.addHook('onClose', async () => {
    await container.get<SessionRepository>(TYPES.SessionRepository).close?.();
  });
  // Who is asking is settled first: an anonymous request is answered 401 before its body is read or
  // anything is looked up in the session store.
  app.addHook('onRequest', async (request) => {
    if (request.url.startsWith('/v1/')) userOf(request);
  });
  app.setErrorHandler((error, _request, reply) => {
    const status = statusOf(error);
    if (status === 503) void reply.header('retry-after', '1');
    const message = isDeletedSession(error) ? 'conversation not found' : error instanceof Error ? error.message : String(error);
    void reply.status(status).send({ error: message });
  });

  /**
   * A conversation id that was deleted: its owner learns it is gone (410), anyone else only that there is no
   * such conversation (404) — when, or whether, someone else's conversation was deleted is not theirs to know.
   * Returns when the id was never used (or its tombstone expired).
   */
  async function refuseDeleted(id: string, userId: string): Promise<void> {
    const repository = container.get<SessionRepository>(TYPES.SessionRepository);
    if (!isErasureRepository(repository)) return;
    const tombstone = await repository.findTombstone(id);
    if (tombstone === null) return;
    if (tombstone.ownerHash === ownerHash(userId)) throw new HttpError(410, `conversation '${id}' was deleted`);
    throw new HttpError(404, `conversation '${id}' not found`);
  }

  /**
   * A conversation id sent to continue a chat: the caller's live one goes on, another user's is refused (403) on
   * this one lookup — before the memory reads any history — and a deleted one is refused as above.
   */
  async function continuable(id: string | undefined, userId: string): Promise<void> {
    if (id === undefined) return;
    const session = await sessions().findById(id);
    if (session === null) return refuseDeleted(id, userId);
    if (session.userId !== userId) throw new HttpError(403, accessDeniedMessage(id, userId));
  }

  /** The session must exist and be the caller's; another user's session answers 403, a missing one 404. */
  async function ownedSession(id: string, userId: string) {
    const session = await sessions().findById(id);
    if (session === null) {
      await refuseDeleted(id, userId);
      throw new HttpError(404, `conversation '${id}' not found`);
    }
    if (session.userId !== userId) throw new HttpError(403, accessDeniedMessage(id, userId));
    return session;
  }

  const firstRound = (body: QueryBody): ChatCompletionMessageParam[] => [
    ...(config.systemPrompt ? [{ role: 'system' as const, content: config.systemPrompt }] : []),
    { role: 'user', content: body.query },
  ];
  const toolParams = () => (config.recallTools ? { tools: recall().definitions } : {});

  /** Answers the recall tool calls of a reply server-side; null when the reply has other tool calls or none. */
  async function recallRound(message: ChatCompletionMessage, sessionId: string, userId: string) {
    const calls = message.tool_calls ?? [];
    if (!config.recallTools || calls.length === 0 || !calls.every((c) => recall().handles(c))) return null;
    return Promise.all(calls.map((c) => recall().execute(c, { sessionId, userId })));
  }

  app.post<{ Body: QueryBody }>('/v1/query', { schema: { body: queryBodySchema } }, async (request) => {
    const userId = userOf(request);
    await continuable(request.body.conversation_id, userId);
    const sessionId = request.body.conversation_id ?? randomUUID();
    let messages = firstRound(request.body);
    let response: SessionMemoryResponse<OpenAIChatTypes> | undefined;
    let summarized = false;
    let compaction: CompactionResult | undefined;
    for (let round = 0; round <= config.maxToolRounds; round++) {
      response = await memory().call({ sessionId, userId, messages, ...toolParams() });
      summarized ||= response.contextStatus === 'summarized';
      compaction = response.compaction ?? compaction;
      const toolMessages = round < config.maxToolRounds ? await recallRound(response.message, sessionId, userId) : null;
      if (toolMessages === null) break;
      messages = toolMessages;
    }
    return {
      conversation_id: sessionId,
      response: response!.message.content ?? '',
      tool_calls: response!.message.tool_calls ?? [],
      context_status: summarized ? 'summarized' : 'full',
      compaction: compactionJson(compaction),
      usage: response!.usage,
    };
  });

  app.post<{ Body: QueryBody }>('/v1/streaming_query', { schema: { body: queryBodySchema } }, async (request, reply) => {
    const userId = userOf(request);
    await continuable(request.body.conversation_id, userId);
    const sessionId = request.body.conversation_id ?? randomUUID();
    const abort = new AbortController();
    // The response's close (not the request's, which fires once the body is read) means the client went away.
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    let headersSent = false;
    const send = (event: string, data: unknown) => {
      if (!headersSent) {
        reply.hijack();
        reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
        headersSent = true;
        reply.raw.write(`event: start\ndata: ${JSON.stringify({ conversation_id: sessionId })}\n\n`);
      }
      reply.raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    try {
      let messages = firstRound(request.body);
      let summarized = false;
      let compaction: CompactionResult | undefined;
      for (let round = 0; round <= config.maxToolRounds; round++) {
        let done: SessionMemoryResponse<OpenAIChatTypes> | undefined;
        // The first item is awaited before any header is written, so an access violation is still a plain 403.
        for await (const item of memory().stream({ sessionId, userId, messages, ...toolParams(), signal: abort.signal })) {
          switch (item.type) {
            case 'chunk': {
              const text = item.chunk.choices[0]?.delta.content;
              if (text) send('token', { text });
              break;
            }
            case 'compaction_started':
              send('compaction_started', {});
              break;
            case 'compaction_completed':
              send('compaction_completed', compactionJson(item.result));
              break;
            case 'compaction_skipped':
              send('compaction_skipped', { reason: item.reason });
              break;
            case 'compaction_failed':
              send('compaction_failed', { error: String(item.error) });
              break;
            case 'done':
              done = item.response;
              break;
          }
        }
        summarized ||= done!.contextStatus === 'summarized';
        compaction = done!.compaction ?? compaction;
        const toolMessages = round < config.maxToolRounds ? await recallRound(done!.message, sessionId, userId) : null;
        if (toolMessages === null) {
          send('end', {
            conversation_id: sessionId,
            response: done!.message.content ?? '',
            tool_calls: done!.message.tool_calls ?? [],
            context_status: summarized ? 'summarized' : 'full',
            compaction: compactionJson(compaction),
            usage: done!.usage,
          });
          break;
        }
        for (const call of done!.message.tool_calls ?? [])
          send('tool_call', { id: call.id, name: call.type === 'function' ? call.function.name : call.type });
        messages = toolMessages;
      }
    } catch (error) {
      if (!headersSent) throw error;
      send('error', { status: statusOf(error), error: error instanceof Error ? error.message : String(error) });
    }
    if (headersSent) reply.raw.end();
  });

  app.get<{ Params: { id: string } }>('/v1/conversations/:id', async (request) => {
    const session = await ownedSession(request.params.id, userOf(request));
    const events = await sessions().getEvents(session.id);
    return {
      conversation_id: session.id,
      user_id: session.userId,
      created_at: session.createdAt.toISOString(),
      message_count: events.filter((e) => !e.isSynthetic()).length,
      archived_count: events.filter((e) => e.isArchived()).length,
      events: events.map(eventJson),
    };
  });

  app.delete<{ Params: { id: string } }>('/v1/conversations/:id', async (request, reply) => {
    const session = await ownedSession(request.params.id, userOf(request));
    await sessions().delete(session.id);
    return reply.status(204).send();
  });

  return app;
}
