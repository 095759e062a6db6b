import { isDeepStrictEqual } from 'node:util';
import { protocol, type AgentInputItem } from '@openai/agents';
import { expect } from 'chai';
import fc from 'fast-check';
import { SessionEvent } from 'session-compaction';
import { fromAgentItem, itemsOf } from 'session-compaction/openai-agents';
import { decodeEvent, encodeEvent } from 'session-compaction/spi';
import { propertyParams } from '../../support/arbitraries.js';

const rec = <T extends Record<string, fc.Arbitrary<unknown>>>(model: T, optional: Array<keyof T & string> = []) =>
  fc.record(model, {
    requiredKeys: Object.keys(model).filter((k) => !optional.includes(k)) as Array<keyof T & string>,
    noNullPrototype: true,
  });
const text = fc.string({ maxLength: 10 });
const id = fc.string({ minLength: 1, maxLength: 8 });
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 2 }),
    fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), tie('value'), { maxKeys: 2, noNullPrototype: true }),
  ),
})).value;
const providerData = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), json, {
  minKeys: 1,
  maxKeys: 2,
  noNullPrototype: true,
});
const status = fc.constantFrom('in_progress' as const, 'completed' as const, 'incomplete' as const);
const caller = fc.oneof(
  rec({ type: fc.constant('direct' as const) }),
  rec({ type: fc.constant('program' as const), callerId: id }),
);

const inputText = rec({ type: fc.constant('input_text' as const), text, providerData }, ['providerData']);
const inputImage = rec(
  {
    type: fc.constant('input_image' as const),
    image: fc.oneof(fc.webUrl(), rec({ id })),
    detail: fc.constantFrom('low', 'high'),
  },
  ['image', 'detail'],
);
const inputFile = rec(
  { type: fc.constant('input_file' as const), file: fc.oneof(text, rec({ id }), rec({ url: fc.webUrl() })), filename: text },
  ['file', 'filename'],
);

const kinds: Record<string, fc.Arbitrary<unknown>> = {
  user: rec(
    {
      type: fc.constant('message' as const),
      role: fc.constant('user' as const),
      content: fc.oneof(text, fc.array(fc.oneof(inputText, inputImage, inputFile), { maxLength: 3 })),
      id,
      providerData,
    },
    ['type', 'id', 'providerData'],
  ),
  system: rec({ type: fc.constant('message' as const), role: fc.constant('system' as const), content: text, id, providerData }, [
    'type',
    'id',
    'providerData',
  ]),
  assistant: rec(
    {
      type: fc.constant('message' as const),
      role: fc.constant('assistant' as const),
      status,
      phase: fc.constantFrom('commentary' as const, 'final_answer' as const),
      id,
      providerData,
      content: fc.array(
        fc.oneof(
          rec({ type: fc.constant('output_text' as const), text, providerData }, ['providerData']),
          rec({ type: fc.constant('refusal' as const), refusal: text }),
          rec(
            {
              type: fc.constant('audio' as const),
              audio: fc.oneof(text, rec({ id })),
              transcript: fc.option(text, { nil: null }),
            },
            ['transcript'],
          ),
          rec({ type: fc.constant('image' as const), image: fc.webUrl() }),
        ),
        { maxLength: 3 },
      ),
    },
    ['type', 'phase', 'id', 'providerData'],
  ),
  function_call: rec(
    {
      type: fc.constant('function_call' as const),
      callId: id,
      name: id,
      arguments: json.map((j) => JSON.stringify(j)),
      id,
      status,
      namespace: id,
      caller,
      providerData,
    },
    ['id', 'status', 'namespace', 'caller', 'providerData'],
  ),
  function_call_result: rec(
    {
      type: fc.constant('function_call_result' as const),
      callId: id,
      name: id,
      status,
      output: fc.oneof(
        text,
        rec({ type: fc.constant('text' as const), text }),
        rec({
          type: fc.constant('image' as const),
          image: fc.oneof(
            fc.webUrl(),
            rec({ data: fc.uint8Array({ maxLength: 8 }), mediaType: fc.constant('image/png') }, ['mediaType']),
          ),
        }),
        fc.array(fc.oneof(inputText, inputImage, inputFile), { maxLength: 2 }),
      ),
      id,
      providerData,
    },
    ['id', 'providerData'],
  ),
  reasoning: rec(
    {
      type: fc.constant('reasoning' as const),
      id,
      content: fc.array(inputText, { maxLength: 2 }),
      rawContent: fc.array(rec({ type: fc.constant('reasoning_text' as const), text }), { maxLength: 2 }),
      providerData: providerData.map((p) => ({ ...p, encrypted_content: 'enc' })),
    },
    ['id', 'rawContent', 'providerData'],
  ),
  compaction: rec({ type: fc.constant('compaction' as const), encrypted_content: text, id, created_by: text, providerData }, [
    'id',
    'created_by',
    'providerData',
  ]),
  hosted_tool_call: rec(
    { type: fc.constant('hosted_tool_call' as const), name: id, arguments: text, status: text, output: text, id, providerData },
    ['arguments', 'status', 'output', 'id', 'providerData'],
  ),
  computer_call: rec(
    {
      type: fc.constant('computer_call' as const),
      callId: id,
      status,
      action: rec({ type: fc.constant('click' as const), x: fc.nat(), y: fc.nat(), button: fc.constant('left' as const) }),
      id,
    },
    ['id'],
  ),
  computer_call_result: rec(
    {
      type: fc.constant('computer_call_result' as const),
      callId: id,
      output: rec({ type: fc.constant('computer_screenshot' as const), data: fc.base64String({ maxLength: 8 }) }),
      id,
    },
    ['id'],
  ),
  shell_call: rec(
    {
      type: fc.constant('shell_call' as const),
      callId: id,
      status,
      action: rec({ commands: fc.array(text, { maxLength: 2 }) }),
      id,
    },
    ['id'],
  ),
  shell_call_output: rec(
    {
      type: fc.constant('shell_call_output' as const),
      callId: id,
      output: fc.array(
        rec({ stdout: text, stderr: text, outcome: rec({ type: fc.constant('exit' as const), exitCode: fc.integer() }) }),
        { maxLength: 2 },
      ),
      id,
    },
    ['id'],
  ),
  apply_patch_call: rec(
    {
      type: fc.constant('apply_patch_call' as const),
      callId: id,
      status: fc.constantFrom('in_progress' as const, 'completed' as const),
      operation: rec({ type: fc.constant('create_file' as const), path: text, diff: text }),
      id,
    },
    ['id'],
  ),
  apply_patch_call_output: rec(
    {
      type: fc.constant('apply_patch_call_output' as const),
      callId: id,
      status: fc.constantFrom('completed' as const, 'failed' as const),
      output: text,
      id,
    },
    ['output', 'id'],
  ),
  program: rec({ type: fc.constant('program' as const), callId: id, code: text, fingerprint: text, id }, ['id']),
  program_output: rec(
    {
      type: fc.constant('program_output' as const),
      callId: id,
      output: text,
      status: fc.constantFrom('completed' as const, 'incomplete' as const),
      id,
    },
    ['id'],
  ),
  tool_search_call: rec(
    {
      type: fc.constant('tool_search_call' as const),
      callId: id,
      execution: fc.constantFrom('client' as const, 'server' as const),
      arguments: json,
      status: text,
      id,
    },
    ['callId', 'execution', 'status', 'id'],
  ),
  tool_search_output: rec(
    {
      type: fc.constant('tool_search_output' as const),
      callId: id,
      execution: fc.constantFrom('client' as const, 'server' as const),
      tools: fc.array(rec({ type: fc.constant('function'), name: id }), { maxLength: 2 }),
      status: text,
      id,
    },
    ['callId', 'execution', 'status', 'id'],
  ),
  unknown: rec({ type: fc.constant('unknown' as const), id, providerData }, ['id', 'providerData']),
};

describe('property: Agents SDK items → events → items', function () {
  it('every kind the SDK defines is covered by the generators (they parse as protocol items)', function () {
    for (const [kind, arb] of Object.entries(kinds)) {
      for (const sample of fc.sample(arb, { numRuns: 20, seed: 7 })) {
        const parsed = protocol.ModelItem.safeParse(sample);
        expect(parsed.success, `${kind}: ${JSON.stringify(sample)} ${parsed.success ? '' : parsed.error.message}`).to.equal(true);
      }
    }
  });

  it('is lossless for every item kind (binary image data included), through the storage codec', function () {
    fc.assert(
      fc.property(fc.oneof(...Object.values(kinds)) as fc.Arbitrary<AgentInputItem>, (item) => {
        const entry = fromAgentItem(item);
        const event = decodeEvent(
          encodeEvent(SessionEvent.create({ sessionId: 's', message: entry.message, metadata: entry.metadata })),
        );
        const back = itemsOf(event);
        expect(back).to.deep.equal([item]);
        expect(isDeepStrictEqual(back, [item]), 'strictly equal').to.equal(true);
      }),
      propertyParams(400),
    );
  });
});
