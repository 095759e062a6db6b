import { isDeepStrictEqual } from 'node:util';
import type { ModelMessage } from 'ai';
import { expect } from 'chai';
import fc from 'fast-check';
import { SessionEvent } from 'session-compaction';
import { fromModelMessage, toModelMessage } from 'session-compaction/ai-sdk';
import { decodeEvent, encodeEvent } from 'session-compaction/spi';
import { propertyParams } from '../../support/arbitraries.js';

const text = fc.string({ maxLength: 12 });
const id = fc.string({ minLength: 1, maxLength: 8 });
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 6 }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), tie('value'), { maxKeys: 3, noNullPrototype: true }),
  ),
})).value;
const providerOptions = fc.dictionary(
  fc.constantFrom('openai', 'anthropic'),
  fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), json, { maxKeys: 2, noNullPrototype: true }),
  {
    minKeys: 1,
    maxKeys: 2,
    noNullPrototype: true,
  },
);
const rec = <T extends Record<string, fc.Arbitrary<unknown>>>(model: T) => fc.record(model, { noNullPrototype: true });
/** An optional key is either absent or set — never `undefined`, which storage (like JSON) leaves out. */
const opt = <T extends Record<string, fc.Arbitrary<unknown>>>(model: T, keys: Array<keyof T & string>) =>
  fc.record(model, { requiredKeys: keys, noNullPrototype: true });

const bytes = fc.uint8Array({ maxLength: 16 });
const inlineData = fc.oneof(
  bytes,
  bytes.map((b) => Buffer.from(b)),
  bytes.map((b) => b.slice().buffer),
  fc.base64String({ maxLength: 16 }),
  fc.webUrl().map((u) => new URL(u)),
);
const fileData = fc.oneof(
  inlineData,
  rec({ provider: id }),
  inlineData.map((data) => ({ type: 'data' as const, data })),
  fc.webUrl().map((u) => ({ type: 'url' as const, url: new URL(u) })),
  rec({ type: fc.constant('text' as const), text }),
);
const mediaType = fc.constantFrom('image/png', 'application/pdf', 'text/plain');

const textPart = opt({ type: fc.constant('text' as const), text, providerOptions }, ['type', 'text']);
const imagePart = opt({ type: fc.constant('image' as const), image: inlineData, mediaType, providerOptions }, ['type', 'image']);
const filePart = opt({ type: fc.constant('file' as const), data: fileData, mediaType, filename: text, providerOptions }, [
  'type',
  'data',
  'mediaType',
]);
const reasoningPart = opt({ type: fc.constant('reasoning' as const), text, providerOptions }, ['type', 'text']);
const toolCallPart = opt(
  {
    type: fc.constant('tool-call' as const),
    toolCallId: id,
    toolName: id,
    input: json,
    providerOptions,
    providerExecuted: fc.boolean(),
  },
  ['type', 'toolCallId', 'toolName', 'input'],
);
const output = fc.oneof(
  rec({ type: fc.constant('text' as const), value: text }),
  rec({ type: fc.constant('json' as const), value: json }),
  rec({ type: fc.constant('error-text' as const), value: text }),
  rec({ type: fc.constant('error-json' as const), value: json }),
  opt({ type: fc.constant('execution-denied' as const), reason: text }, ['type']),
  rec({
    type: fc.constant('content' as const),
    value: fc.array(
      fc.oneof(
        rec({ type: fc.constant('text' as const), text }),
        rec({ type: fc.constant('file-url' as const), url: fc.webUrl() }),
        rec({ type: fc.constant('file-data' as const), data: fc.base64String({ maxLength: 8 }), mediaType }),
      ),
      { maxLength: 3 },
    ),
  }),
);
const toolResultPart = opt({ type: fc.constant('tool-result' as const), toolCallId: id, toolName: id, output, providerOptions }, [
  'type',
  'toolCallId',
  'toolName',
  'output',
]);
const approvalRequest = opt(
  { type: fc.constant('tool-approval-request' as const), approvalId: id, toolCallId: id, reason: text },
  ['type', 'approvalId', 'toolCallId'],
);
const approvalResponse = opt(
  { type: fc.constant('tool-approval-response' as const), approvalId: id, approved: fc.boolean(), reason: text },
  ['type', 'approvalId', 'approved'],
);
const customPart = opt(
  { type: fc.constant('custom' as const), kind: fc.constantFrom('acme.note' as const, 'x.y' as const), providerOptions },
  ['type', 'kind'],
);
const reasoningFilePart = opt({ type: fc.constant('reasoning-file' as const), data: inlineData, mediaType, providerOptions }, [
  'type',
  'data',
  'mediaType',
]);

const withOptions = <T extends object>(arb: fc.Arbitrary<T>) =>
  fc
    .tuple(arb, fc.option(providerOptions, { nil: undefined }))
    .map(([m, o]) => (o === undefined ? m : { ...m, providerOptions: o }));

const modelMessage: fc.Arbitrary<ModelMessage> = fc.oneof(
  withOptions(rec({ role: fc.constant('system' as const), content: text })),
  withOptions(
    rec({
      role: fc.constant('user' as const),
      content: fc.oneof(text, fc.array(fc.oneof(textPart, imagePart, filePart), { maxLength: 4 })),
    }),
  ),
  withOptions(
    rec({
      role: fc.constant('assistant' as const),
      content: fc.oneof(
        text,
        fc.array(
          fc.oneof(
            textPart,
            reasoningPart,
            toolCallPart,
            toolResultPart,
            filePart,
            reasoningFilePart,
            customPart,
            approvalRequest,
          ),
          { maxLength: 5 },
        ),
      ),
    }),
  ),
  withOptions(
    rec({ role: fc.constant('tool' as const), content: fc.array(fc.oneof(toolResultPart, approvalResponse), { maxLength: 4 }) }),
  ),
) as fc.Arbitrary<ModelMessage>;

describe('property: AI SDK model messages → events → model messages', function () {
  it('is lossless for every message and part kind (bytes, URLs and provider options included), through the storage codec', function () {
    fc.assert(
      fc.property(modelMessage, (message) => {
        const entry = fromModelMessage(message);
        const event = decodeEvent(
          encodeEvent(SessionEvent.create({ sessionId: 's', message: entry.message, metadata: entry.metadata })),
        );
        const back = toModelMessage(event);
        expect(back).to.deep.equal(message);
        // Also the same classes: a Buffer comes back a Buffer, an ArrayBuffer an ArrayBuffer, a URL a URL.
        expect(isDeepStrictEqual(back, message), 'strictly equal').to.equal(true);
      }),
      propertyParams(400),
    );
  });
});
