import type {
  ContentBlockParam,
  MessageParam,
  TextBlockParam,
  ToolResultBlockParam,
  ToolUseBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import { expect } from 'chai';
import fc from 'fast-check';
import { SessionEvent } from 'session-compaction';
import { fromAnthropicPrompt, toAnthropicMessages, type AnthropicPrompt } from 'session-compaction/anthropic';
import { decodeEvent, encodeEvent } from 'session-compaction/spi';
import { propertyParams } from '../../support/arbitraries.js';

const text = fc.string({ minLength: 1, maxLength: 12 });
const cache = fc.option(fc.constant({ type: 'ephemeral' as const }), { nil: undefined });
const jsonObject = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 5 }),
  fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 })),
  { maxKeys: 3 },
);
const withCache = <T extends object>(block: T, c: { type: 'ephemeral' } | undefined): T =>
  c === undefined ? block : { ...block, cache_control: c };

const textBlock: fc.Arbitrary<TextBlockParam> = fc
  .tuple(text, cache)
  .map(([t, c]) => withCache({ type: 'text' as const, text: t }, c));
const imageBlock: fc.Arbitrary<ContentBlockParam> = fc.oneof(
  fc.webUrl().map((url) => ({ type: 'image' as const, source: { type: 'url' as const, url } })),
  fc.base64String({ minLength: 4, maxLength: 16 }).map((data) => ({
    type: 'image' as const,
    source: { type: 'base64' as const, media_type: 'image/png' as const, data },
  })),
  fc
    .string({ minLength: 1, maxLength: 8 })
    .map((id) => ({ type: 'image' as const, source: { type: 'file' as const, file_id: id } })),
);
const documentBlock: fc.Arbitrary<ContentBlockParam> = fc.record(
  {
    type: fc.constant('document' as const),
    source: fc.oneof(
      text.map((data) => ({ type: 'text' as const, media_type: 'text/plain' as const, data })),
      fc.webUrl().map((url) => ({ type: 'url' as const, url })),
    ),
    title: text,
  },
  { requiredKeys: ['type', 'source'] },
);
const searchResultBlock: fc.Arbitrary<ContentBlockParam> = fc.record({
  type: fc.constant('search_result' as const),
  source: fc.webUrl(),
  title: text,
  content: fc.array(textBlock, { minLength: 1, maxLength: 2 }),
});
const userBlock = fc.oneof({ weight: 4, arbitrary: textBlock }, imageBlock, documentBlock, searchResultBlock);

const userContent: fc.Arbitrary<MessageParam['content']> = fc.oneof(text, fc.array(userBlock, { minLength: 1, maxLength: 4 }));

/** Ids are numbered by the caller so they stay unique over the conversation. */
type AssistantShape = { content: string | ContentBlockParam[]; toolIds: string[] };

function assistantArb(turn: number, allowTools: boolean): fc.Arbitrary<AssistantShape> {
  const toolUse = (i: number): fc.Arbitrary<ToolUseBlockParam> =>
    fc
      .tuple(fc.constantFrom('weather', 'search', 'calc'), jsonObject)
      .map(([name, input]) => ({ type: 'tool_use', id: `toolu_${turn}_${i}`, name, input }));
  const thinking = fc.record({ type: fc.constant('thinking' as const), thinking: text, signature: text });
  const redacted = fc.record({ type: fc.constant('redacted_thinking' as const), data: text });
  const server = fc.constant<ContentBlockParam[]>([
    { type: 'server_tool_use', id: `srvtoolu_${turn}`, name: 'web_search', input: { query: 'q' } },
    { type: 'web_search_tool_result', tool_use_id: `srvtoolu_${turn}`, content: [] },
  ]);
  const blocks = fc
    .tuple(
      fc.array(fc.oneof(thinking, redacted), { maxLength: 2 }),
      fc.option(server, { nil: undefined }),
      fc.array(textBlock, { maxLength: 2 }),
      allowTools ? fc.integer({ min: 0, max: 3 }) : fc.constant(0),
    )
    .chain(([think, srv, texts, tools]) =>
      fc.tuple(...Array.from({ length: tools }, (_, i) => toolUse(i))).map((uses) => {
        const content: ContentBlockParam[] = [...think, ...(srv ?? []), ...texts, ...uses];
        return content.length === 0 ? { content: 'ok', toolIds: [] } : { content, toolIds: uses.map((u) => u.id) };
      }),
    );
  return fc.oneof({ weight: 1, arbitrary: text.map((t) => ({ content: t, toolIds: [] })) }, { weight: 3, arbitrary: blocks });
}

function toolResults(ids: readonly string[]): fc.Arbitrary<ToolResultBlockParam[]> {
  const content = fc.option(fc.oneof(text, fc.array(fc.oneof(textBlock, imageBlock), { minLength: 1, maxLength: 2 })), {
    nil: undefined,
  });
  return fc
    .tuple(
      ...ids.map((id) => fc.record({ content, isError: fc.option(fc.boolean(), { nil: undefined }) }).map((r) => ({ id, ...r }))),
    )
    .chain((results) => fc.shuffledSubarray(results, { minLength: results.length, maxLength: results.length }))
    .map((results) =>
      results.map((r) => {
        const block: ToolResultBlockParam = { type: 'tool_result', tool_use_id: r.id };
        if (r.content !== undefined) block.content = r.content as ToolResultBlockParam['content'];
        if (r.isError !== undefined) block.is_error = r.isError;
        return block;
      }),
    );
}

/** A valid conversation: user first, roles alternating, every tool_use answered in the next user message. */
const conversationArb: fc.Arbitrary<AnthropicPrompt> = fc
  .tuple(
    fc.option(fc.oneof(text, fc.array(textBlock, { minLength: 1, maxLength: 2 })), { nil: undefined }),
    fc.integer({ min: 1, max: 6 }),
  )
  .chain(([system, turns]) => {
    let chain: fc.Arbitrary<MessageParam[]> = userContent.map((content) => [{ role: 'user' as const, content }]);
    for (let t = 0; t < turns; t++) {
      const last = t === turns - 1;
      chain = chain.chain((messages) =>
        assistantArb(t, true).chain((assistant) => {
          const withAssistant: MessageParam[] = [...messages, { role: 'assistant', content: assistant.content }];
          if (assistant.toolIds.length === 0) {
            return last
              ? fc.constant(withAssistant)
              : userContent.map((content) => [...withAssistant, { role: 'user' as const, content }]);
          }
          return fc
            .tuple(toolResults(assistant.toolIds), fc.array(userBlock, { maxLength: last ? 2 : 1 }))
            .map(([results, rest]) => [...withAssistant, { role: 'user' as const, content: [...results, ...rest] }]);
        }),
      );
    }
    return chain.map((messages): AnthropicPrompt => (system === undefined ? { messages } : { system, messages }));
  });

describe('property: Anthropic messages → events → Anthropic messages', function () {
  it('is lossless for every message and block kind, through the storage codec', function () {
    fc.assert(
      fc.property(conversationArb, (prompt) => {
        const events = fromAnthropicPrompt(prompt).map((e, i) =>
          decodeEvent(
            encodeEvent(SessionEvent.create({ sessionId: 's', id: `e${i}`, message: e.message, metadata: e.metadata })),
          ),
        );
        expect(toAnthropicMessages(events)).to.deep.equal(prompt);
      }),
      propertyParams(300),
    );
  });
});
