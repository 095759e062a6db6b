/**
 * Context-overflow refusals exactly as each provider documents and sends them, for the loopback fakes.
 * OpenAI (Chat Completions): HTTP 400 with `error.code` `context_length_exceeded`. Anthropic (Messages): HTTP
 * 400 `invalid_request_error` "prompt is too long: N tokens > M maximum", and HTTP 413 `request_too_large`.
 */
import type { FakeReply } from './fakeOpenAIServer.js';
import type { FakeAnthropicReply } from './fakeAnthropicServer.js';

/** The body OpenAI sends when the messages do not fit the model's window. */
export function openAIContextLengthBody(limit: number, tokens: number): string {
  return JSON.stringify({
    error: {
      message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  });
}

export function openAIContextLengthExceeded(limit: number, tokens: number): FakeReply {
  return { status: 400, rawBody: openAIContextLengthBody(limit, tokens) };
}

/** The body Anthropic sends when the prompt does not fit the model's window. */
export function anthropicPromptTooLongBody(tokens: number, limit: number): Record<string, unknown> {
  return {
    type: 'error',
    error: { type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > ${limit} maximum` },
    request_id: 'req_011CFakeOverflow',
  };
}

export function anthropicPromptTooLong(tokens: number, limit: number): FakeAnthropicReply {
  return { status: 400, errorBody: anthropicPromptTooLongBody(tokens, limit) };
}

/** Anthropic's 413: the request body is over the endpoint's size limit. */
export function anthropicRequestTooLarge(): FakeAnthropicReply {
  return {
    status: 413,
    errorBody: {
      type: 'error',
      error: { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' },
    },
  };
}

/** What the Responses API sends for an input over the model's window: the code, and no token counts. */
export function openAIResponsesContextWindowExceeded(): FakeReply {
  return {
    status: 400,
    rawBody: JSON.stringify({
      error: {
        message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
        type: 'invalid_request_error',
        param: 'input',
        code: 'context_length_exceeded',
      },
    }),
  };
}
