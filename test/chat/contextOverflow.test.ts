import Anthropic from '@anthropic-ai/sdk';
import { LangChainError } from '@langchain/core/errors';
import { APICallError, RetryError } from 'ai';
import { expect } from 'chai';
import fc from 'fast-check';
import OpenAI from 'openai';
import { ContextOverflowError } from 'session-compaction';
import { aiSdkRefusal } from 'session-compaction/ai-sdk';
import { anthropicRefusal } from 'session-compaction/anthropic';
import { openAIRefusal } from 'session-compaction/openai';
import { classifyRefusal, detectContextOverflow } from 'session-compaction/spi';
import { anthropicPromptTooLongBody, openAIContextLengthBody } from '../support/providerRefusals.js';

const openAIError = (status: number, body: string) =>
  OpenAI.APIError.generate(status, JSON.parse(body) as object, undefined, new Headers());
const anthropicError = (status: number, body: object) => Anthropic.APIError.generate(status, body, undefined, new Headers());

describe('context-overflow classification', function () {
  it("reads OpenAI's context_length_exceeded refusal, with the window and the prompt's length it states", function () {
    const overflow = detectContextOverflow(openAIError(400, openAIContextLengthBody(128000, 130310)), openAIRefusal);
    expect(overflow).to.deep.include({ status: 400, kind: 'tokens', limitTokens: 128000, promptTokens: 130310 });
  });

  it('reads the prompt and the reply reserve from "you requested N tokens (X in the messages, Y in the completion)"', function () {
    const body = JSON.stringify({
      error: {
        message:
          "This model's maximum context length is 8192 tokens. However, you requested 8554 tokens (7554 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    });
    expect(detectContextOverflow(openAIError(400, body), openAIRefusal)).to.deep.include({
      limitTokens: 8192,
      promptTokens: 7554,
      replyTokens: 1000,
    });
  });

  it("reads Anthropic's 'prompt is too long' refusal through the Anthropic SDK's error", function () {
    const overflow = detectContextOverflow(anthropicError(400, anthropicPromptTooLongBody(210000, 200000)), anthropicRefusal);
    expect(overflow).to.deep.include({ status: 400, kind: 'tokens', promptTokens: 210000, limitTokens: 200000 });
  });

  it("reads Anthropic's 'input length and max_tokens exceed context limit' with the reply reserve", function () {
    const body = {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message:
          'input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again',
      },
    };
    expect(detectContextOverflow(anthropicError(400, body), anthropicRefusal)).to.deep.include({
      promptTokens: 188240,
      replyTokens: 21333,
      limitTokens: 200000,
    });
  });

  it("takes Anthropic's 413 request_too_large and a plain HTTP 413 for an overflow of the request's size", function () {
    const tooLarge = anthropicError(413, {
      type: 'error',
      error: { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' },
    });
    expect(detectContextOverflow(tooLarge, anthropicRefusal)).to.deep.include({ status: 413, kind: 'bytes' });
    const proxy = Object.assign(new Error('Request Entity Too Large'), { status: 413 });
    expect(detectContextOverflow(proxy)).to.deep.include({ status: 413, kind: 'bytes' });
  });

  it("reads the AI SDK's APICallError in either provider's body, also inside a RetryError", function () {
    const fromOpenAI = new APICallError({
      message: 'This model’s maximum context length…',
      url: 'https://api.openai.com/v1/chat/completions',
      requestBodyValues: {},
      statusCode: 400,
      responseBody: openAIContextLengthBody(128000, 130310),
      data: JSON.parse(openAIContextLengthBody(128000, 130310)) as unknown,
    });
    expect(detectContextOverflow(fromOpenAI, aiSdkRefusal)).to.deep.include({ promptTokens: 130310, limitTokens: 128000 });
    const fromAnthropic = new APICallError({
      message: 'prompt is too long',
      url: 'https://api.anthropic.com/v1/messages',
      requestBodyValues: {},
      statusCode: 400,
      responseBody: JSON.stringify(anthropicPromptTooLongBody(210000, 200000)),
    });
    const retried = new RetryError({ message: 'Failed after 1 attempt', reason: 'errorNotRetryable', errors: [fromAnthropic] });
    expect(detectContextOverflow(retried, aiSdkRefusal)).to.deep.include({ promptTokens: 210000, limitTokens: 200000 });
  });

  it("reads LangChain's wrapped overflow through its cause", function () {
    const original = openAIError(400, openAIContextLengthBody(8192, 8227));
    const wrapped = Object.assign(new LangChainError(original.message), { name: 'ContextOverflowError', cause: original });
    expect(detectContextOverflow(wrapped, openAIRefusal)).to.deep.include({ promptTokens: 8227, limitTokens: 8192 });
  });

  it('is not fooled by a rate limit, a server error, an auth error or an unrelated 400', function () {
    const rateLimit = openAIError(
      429,
      JSON.stringify({
        error: {
          message: 'Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 50000.',
          type: 'tokens',
          param: null,
          code: 'rate_limit_exceeded',
        },
      }),
    );
    expect(detectContextOverflow(rateLimit, openAIRefusal)).to.equal(null);
    expect(classifyRefusal({ status: 500, message: 'upstream: maximum context length exceeded' })).to.equal(null);
    expect(classifyRefusal({ status: 401, message: 'prompt is too long' })).to.equal(null);
    const badTools = openAIError(
      400,
      JSON.stringify({
        error: { message: "Invalid parameter: messages with role 'tool' must be…", type: 'invalid_request_error' },
      }),
    );
    expect(detectContextOverflow(badTools, openAIRefusal)).to.equal(null);
    expect(detectContextOverflow(new Error('boom'))).to.equal(null);
  });

  it('never takes its own verdict (ContextOverflowError) for a fresh refusal', function () {
    const verdict = new ContextOverflowError(
      's1',
      { message: 'prompt is too long', kind: 'tokens' },
      { attempts: 2, archived: 3 },
    );
    expect(detectContextOverflow(verdict)).to.equal(null);
    expect(verdict).to.be.instanceOf(Error);
    expect(verdict.name).to.equal('ContextOverflowError');
    expect(verdict.message).to.include("Session 's1'");
  });

  it('property: a 429 is never an overflow, whatever it says', function () {
    fc.assert(
      fc.property(fc.string(), fc.option(fc.string(), { nil: undefined }), (message, code) => {
        expect(classifyRefusal({ status: 429, message: `${message} prompt is too long`, ...(code ? { code } : {}) })).to.equal(
          null,
        );
      }),
    );
  });
});
