import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import {
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  NativeCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
} from 'session-compaction';
import {
  ANTHROPIC_NATIVE_COMPACTION,
  AnthropicCompactor,
  AnthropicSessionMemory,
  toAnthropicMessages,
} from 'session-compaction/anthropic';
import { OpenAISessionMemory } from 'session-compaction/openai';
import { METADATA_NATIVE_COMPACTION, nativeCompactionPayload, nativeCompactionRecord } from 'session-compaction/spi';
import type { SessionEvent } from 'session-compaction';
import {
  startFakeAnthropicCompactionServer,
  startFakeOpenAICompactionServer,
  type FakeCompactionServer,
} from '../../support/fakeCompactionServers.js';
import { CharEstimator, SA, SU, U } from '../../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../../summarization/support.js';

const MODEL = 'claude-test';
const LIBRARY_SUMMARY = 'The library summary of the same range.';

describe('AnthropicCompactor (native compaction through the Messages API)', function () {
  this.timeout(30_000);
  let anthropic: FakeCompactionServer;
  let openai: FakeCompactionServer;
  let service: DefaultSessionService;
  let client: Anthropic;

  beforeEach(async function () {
    anthropic = await startFakeAnthropicCompactionServer();
    openai = await startFakeOpenAICompactionServer();
    client = new Anthropic({ apiKey: 'k', baseURL: anthropic.url, maxRetries: 0 });
    service = new DefaultSessionService(new InMemorySessionRepository(), {
      logger: silentLogger,
      tokenCountEstimator: new CharEstimator(),
    });
  });
  afterEach(async () => {
    await anthropic.close();
    await openai.close();
  });

  const strategy = (onNativeFailure?: (request: unknown, error: unknown) => void) =>
    new NativeCompactionStrategy({
      compactor: new AnthropicCompactor(client, { model: MODEL }),
      fallback: new RecursiveSummarizationCompactionStrategy({
        chatClient: new ScriptedChatClient([LIBRARY_SUMMARY]),
        maxEventsToKeep: 2,
        overlapSize: 0,
        tokenCountEstimator: new CharEstimator(),
        logger: silentLogger,
      }),
      logger: silentLogger,
      ...(onNativeFailure !== undefined ? { onNativeFailure } : {}),
    });

  const memory = () =>
    new AnthropicSessionMemory({
      client,
      sessionService: service,
      model: MODEL,
      compactionTrigger: () => true,
      compactionStrategy: strategy(),
      logger: silentLogger,
    });

  async function threeTurns(m: AnthropicSessionMemory, sessionId: string) {
    for (let i = 0; i < 3; i++) await m.call({ sessionId, messages: [{ role: 'user', content: `question ${i}` }] });
  }

  it('asks the API to compact with the documented request, and stores the block byte for byte', async function () {
    await threeTurns(memory(), 's1');
    const compaction = anthropic.requests.find((r) => r.body.compaction !== undefined)!;
    expect(compaction.body.compaction).to.deep.equal({ type: 'summarize' });
    expect(String(compaction.headers['anthropic-beta'])).to.include('compact-2026-09-04');
    expect(compaction.body.model).to.equal(MODEL);
    const [summary] = (await service.getEvents('s1', EventFilter.active())).filter(
      (e) => e.metadata[METADATA_NATIVE_COMPACTION] !== undefined && e.messageType === 'assistant',
    );
    const payload = nativeCompactionPayload(summary!, ANTHROPIC_NATIVE_COMPACTION) as unknown[];
    expect(JSON.stringify(payload[payload.length - 1])).to.equal(anthropic.issued.at(-1));
    expect(nativeCompactionRecord(summary!)!.model).to.equal(MODEL);
    expect(summary!.text, 'other providers read the library summary').to.equal(LIBRARY_SUMMARY);
  });

  it('replays the compaction block verbatim, first, to Anthropic: the API accepts it', async function () {
    const m = memory();
    await threeTurns(m, 's2');
    const issued = anthropic.issued.at(-1)!;
    await m.call({ sessionId: 's2', messages: [{ role: 'user', content: 'next question' }] });
    const turn =
      anthropic.requests.at(-2)!.body.compaction === undefined ? anthropic.requests.at(-2)! : anthropic.requests.at(-3)!;
    const messages = turn.body.messages as Array<{ role: string; content: unknown }>;
    expect(messages[0]!.role).to.equal('assistant');
    expect(JSON.stringify((messages[0]!.content as unknown[])[0])).to.equal(issued);
    expect(turn.raw).to.include(issued);
    expect(String(turn.headers['anthropic-beta'])).to.include('compact-2026-09-04');
    expect(JSON.stringify(messages)).not.to.include('Summarize the conversation');
    expect(anthropic.rejections).to.deep.equal([]);
  });

  it('a later compaction sends the prior block back first and replaces it with the new one', async function () {
    const m = memory();
    await threeTurns(m, 's3');
    await threeTurns(m, 's3');
    const compactions = anthropic.requests.filter((r) => r.body.compaction !== undefined);
    expect(compactions.length).to.be.greaterThan(1);
    const last = compactions.at(-1)!.body.messages as Array<{ content: unknown }>;
    expect(JSON.stringify((last[0]!.content as unknown[])[0])).to.equal(anthropic.issued.at(-2));
    const summaries = (await service.getEvents('s3', EventFilter.active())).filter(
      (e) => e.isSynthetic() && e.messageType === 'assistant',
    );
    expect(summaries).to.have.length(1);
    expect(anthropic.rejections).to.deep.equal([]);
    expect((await service.verifyCoverage('s3')).ok).to.equal(true);
  });

  it('another provider gets the library summary text, never the block', async function () {
    await threeTurns(memory(), 's4');
    const other = new OpenAISessionMemory({
      client: new OpenAI({ apiKey: 'k', baseURL: openai.url, maxRetries: 0 }),
      sessionService: service,
      model: 'gpt-test',
      logger: silentLogger,
    });
    await other.call({ sessionId: 's4', messages: [{ role: 'user', content: 'switching providers' }] });
    const sent = openai.requests.at(-1)!;
    expect(openai.rejections).to.deep.equal([]);
    expect(sent.raw).to.include(LIBRARY_SUMMARY);
    expect(sent.raw).not.to.include('"compaction"');
  });

  it('a text-only rendering of the same log sends the summary text', async function () {
    await threeTurns(memory(), 's5');
    const events = await service.getEvents('s5', EventFilter.active());
    const replayed = toAnthropicMessages(events);
    const text = toAnthropicMessages(events, { nativeCompaction: 'text' });
    expect(JSON.stringify(replayed.messages[0])).to.include('"type":"compaction"');
    expect(JSON.stringify(text.messages)).not.to.include('"type":"compaction"');
    expect(JSON.stringify(text.messages)).to.include(LIBRARY_SUMMARY);
  });

  for (const status of [400, 429, 500, 529]) {
    it(`falls back to the library summariser when the compaction request fails (${status})`, async function () {
      const { id } = await service.create({ userId: 'u' });
      for (let i = 0; i < 3; i++) {
        await service.appendMessage(id, Messages.user(`question ${i}`));
        await service.appendMessage(id, Messages.assistant(`answer ${i}`));
      }
      const failures: unknown[] = [];
      anthropic.failNext('/v1/messages', status);
      const result = await service.compact(
        id,
        () => true,
        strategy((_r, e) => failures.push(e)),
      );
      expect(result.archivedEvents).to.have.length(4);
      expect(failures).to.have.length(1);
      const window = await service.getEvents(id, EventFilter.active());
      const summary = window.find((e) => e.isSynthetic() && e.messageType === 'assistant')!;
      expect(summary.text).to.equal(LIBRARY_SUMMARY);
      expect(summary.metadata[METADATA_NATIVE_COMPACTION]).to.equal(undefined);
      expect(JSON.stringify(toAnthropicMessages(window).messages)).not.to.include('"type":"compaction"');
    });
  }

  it('a compaction reply without a block with content falls back to the library summariser', async function () {
    const fakeClient = {
      beta: { messages: { create: async () => ({ content: [{ type: 'compaction', content: null }], model: MODEL }) } },
    } as unknown as Anthropic;
    const s = new NativeCompactionStrategy({
      compactor: new AnthropicCompactor(fakeClient, { model: MODEL }),
      fallback: new RecursiveSummarizationCompactionStrategy({
        chatClient: new ScriptedChatClient([LIBRARY_SUMMARY]),
        maxEventsToKeep: 2,
        overlapSize: 0,
        logger: silentLogger,
      }),
      logger: silentLogger,
    });
    const { id } = await service.create({ userId: 'u' });
    for (let i = 0; i < 3; i++) await service.appendMessage(id, Messages.user(`question ${i}`));
    await service.compact(id, () => true, s);
    const summary = (await service.getEvents(id, EventFilter.active())).find(
      (e) => e.isSynthetic() && e.messageType === 'assistant',
    )!;
    expect(summary.metadata[METADATA_NATIVE_COMPACTION]).to.equal(undefined);
    expect(summary.text).to.equal(LIBRARY_SUMMARY);
  });
});

describe('toAnthropicMessages with native compaction summaries', function () {
  const block = (n: number) => ({ type: 'compaction', content: `summary ${n}`, encrypted_content: null, signature: `sig-${n}` });
  /** A native summary pair as NativeCompactionStrategy writes it. */
  const nativePair = (n: number): SessionEvent[] => {
    const shadow = SU();
    const summary = SA(`text ${n}`);
    return [
      shadow.with({ metadata: { ...shadow.metadata, [METADATA_NATIVE_COMPACTION]: { provider: ANTHROPIC_NATIVE_COMPACTION } } }),
      summary.with({
        metadata: {
          ...summary.metadata,
          [METADATA_NATIVE_COMPACTION]: { provider: ANTHROPIC_NATIVE_COMPACTION, payload: JSON.stringify([block(n)]) },
        },
      }),
    ];
  };

  it('replays the block only when it opens the conversation; otherwise the text', function () {
    const leading = toAnthropicMessages([...nativePair(1), U('next')]).messages;
    expect(leading[0]).to.deep.equal({ role: 'assistant', content: [block(1)] });
    const behindAPinnedMessage = toAnthropicMessages([U('pinned'), ...nativePair(1), U('next')]).messages;
    expect(JSON.stringify(behindAPinnedMessage)).not.to.include('"type":"compaction"');
    expect(JSON.stringify(behindAPinnedMessage)).to.include('text 1');
  });

  it('replays only the first of two native summaries (the API takes one block)', function () {
    const messages = toAnthropicMessages([...nativePair(1), ...nativePair(2), U('next')]).messages;
    const text = JSON.stringify(messages);
    expect(text.match(/"type":"compaction"/g)).to.have.length(1);
    expect(text).to.include('text 2');
  });

  it("another provider's native summary is sent as its text", function () {
    const [shadow, summary] = nativePair(1);
    const foreign = summary!.with({
      metadata: { ...summary!.metadata, [METADATA_NATIVE_COMPACTION]: { provider: 'openai-responses', payload: '[]' } },
    });
    const text = JSON.stringify(toAnthropicMessages([shadow!, foreign, U('next')]).messages);
    expect(text).not.to.include('"type":"compaction"');
    expect(text).to.include('text 1');
  });
});
