import Anthropic from '@anthropic-ai/sdk';
import { Agent, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { expect } from 'chai';
import OpenAI from 'openai';
import {
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  NativeCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  type SessionEvent,
} from 'session-compaction';
import { AnthropicSessionMemory } from 'session-compaction/anthropic';
import {
  OPENAI_NATIVE_COMPACTION,
  OpenAIResponsesCompactor,
  OpenAISessionMemory,
  toResponsesInput,
} from 'session-compaction/openai';
import { CompactingSession, toAgentItems } from 'session-compaction/openai-agents';
import { METADATA_NATIVE_COMPACTION, nativeCompactionPayload } from 'session-compaction/spi';
import {
  startFakeAnthropicCompactionServer,
  startFakeOpenAICompactionServer,
  type FakeCompactionServer,
} from '../../support/fakeCompactionServers.js';
import { CharEstimator } from '../../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../../summarization/support.js';

const MODEL = 'gpt-5';
const LIBRARY_SUMMARY = 'The library summary of the same range.';

const nativeSummary = (events: readonly SessionEvent[]) =>
  events.find((e) => e.messageType === 'assistant' && e.metadata[METADATA_NATIVE_COMPACTION] !== undefined);

describe('OpenAIResponsesCompactor (native compaction through /responses/compact)', function () {
  this.timeout(30_000);
  let openai: FakeCompactionServer;
  let client: OpenAI;
  let service: DefaultSessionService;

  before(() => setTracingDisabled(true));
  beforeEach(async function () {
    openai = await startFakeOpenAICompactionServer();
    client = new OpenAI({ apiKey: 'k', baseURL: openai.url, maxRetries: 0 });
    service = new DefaultSessionService(new InMemorySessionRepository(), {
      logger: silentLogger,
      tokenCountEstimator: new CharEstimator(),
    });
  });
  afterEach(async () => openai.close());

  const strategy = (onNativeFailure?: (request: unknown, error: unknown) => void) =>
    new NativeCompactionStrategy({
      compactor: new OpenAIResponsesCompactor(client, { model: MODEL }),
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

  async function conversation(turns = 3): Promise<string> {
    const { id } = await service.create({ userId: 'u' });
    for (let i = 0; i < turns; i++) {
      await service.appendMessage(id, Messages.user(`question ${i}`));
      await service.appendMessage(id, Messages.assistant(`answer ${i}`));
    }
    return id;
  }

  it('compacts with the documented request and stores the output byte for byte', async function () {
    const id = await conversation();
    await service.compact(id, () => true, strategy());
    const request = openai.requests.find((r) => r.path === '/v1/responses/compact')!;
    expect(request.body.model).to.equal(MODEL);
    expect(request.body.input).to.deep.equal([
      { role: 'user', content: 'question 0' },
      { role: 'assistant', content: 'answer 0' },
      { role: 'user', content: 'question 1' },
      { role: 'assistant', content: 'answer 1' },
    ]);
    const summary = nativeSummary(await service.getEvents(id, EventFilter.active()))!;
    const payload = nativeCompactionPayload(summary, OPENAI_NATIVE_COMPACTION) as unknown[];
    expect(JSON.stringify(payload.at(-1))).to.equal(openai.issued.at(-1));
    expect(payload.slice(0, -1).map((m) => (m as { role: string }).role)).to.deep.equal(['user', 'user']);
    expect(summary.text).to.equal(LIBRARY_SUMMARY);
    expect((await service.verifyCoverage(id)).ok).to.equal(true);
  });

  it('replays the output verbatim to the Responses API, in place of the summary pair', async function () {
    const id = await conversation();
    await service.compact(id, () => true, strategy());
    const input = toResponsesInput(await service.getEvents(id, EventFilter.active()));
    await client.responses.create({ model: MODEL, input: [...input, { role: 'user', content: 'next' }] });
    const sent = openai.requests.at(-1)!;
    expect(openai.rejections).to.deep.equal([]);
    expect(sent.raw).to.include(openai.issued.at(-1)!);
    expect(sent.raw).not.to.include(LIBRARY_SUMMARY);
    expect(sent.raw).not.to.include('Summarize the conversation');
  });

  it('a second compaction sends the prior compaction item back and the API accepts it', async function () {
    const id = await conversation();
    await service.compact(id, () => true, strategy());
    for (let i = 3; i < 6; i++) {
      await service.appendMessage(id, Messages.user(`question ${i}`));
      await service.appendMessage(id, Messages.assistant(`answer ${i}`));
    }
    await service.compact(id, () => true, strategy());
    const second = openai.requests.filter((r) => r.path === '/v1/responses/compact')[1]!;
    expect(second.raw).to.include(JSON.stringify(JSON.parse(openai.issued[0]!).encrypted_content));
    expect(openai.rejections).to.deep.equal([]);
    const summaries = (await service.getEvents(id, EventFilter.active())).filter(
      (e) => e.isSynthetic() && e.messageType === 'assistant',
    );
    expect(summaries).to.have.length(1);
    expect(JSON.stringify(nativeCompactionPayload(summaries[0]!, OPENAI_NATIVE_COMPACTION))).to.include(
      JSON.parse(openai.issued[1]!).encrypted_content,
    );
  });

  for (const status of [400, 429, 500, 503]) {
    it(`falls back to the library summariser when /responses/compact fails (${status})`, async function () {
      const id = await conversation();
      const failures: unknown[] = [];
      openai.failNext('/v1/responses/compact', status);
      const result = await service.compact(
        id,
        () => true,
        strategy((_r, e) => failures.push(e)),
      );
      expect(result.archivedEvents).to.have.length(4);
      expect(failures).to.have.length(1);
      const window = await service.getEvents(id, EventFilter.active());
      expect(nativeSummary(window)).to.equal(undefined);
      expect(window.find((e) => e.isSynthetic() && e.messageType === 'assistant')!.text).to.equal(LIBRARY_SUMMARY);
      expect(JSON.stringify(toResponsesInput(window))).not.to.include('"compaction"');
    });
  }

  it('another provider gets the library summary text: Chat Completions and Anthropic', async function () {
    const anthropic = await startFakeAnthropicCompactionServer();
    try {
      const id = await conversation();
      await service.compact(id, () => true, strategy());
      const chat = new OpenAISessionMemory({ client, sessionService: service, model: 'gpt-4o', logger: silentLogger });
      await chat.call({ sessionId: id, messages: [{ role: 'user', content: 'over Chat Completions' }] });
      const completions = openai.requests.at(-1)!;
      expect(completions.path).to.equal('/v1/chat/completions');
      expect(completions.raw).to.include(LIBRARY_SUMMARY);
      expect(completions.raw).not.to.include('encrypted_content');
      expect(openai.rejections).to.deep.equal([]);

      const claude = new AnthropicSessionMemory({
        client: new Anthropic({ apiKey: 'k', baseURL: anthropic.url, maxRetries: 0 }),
        sessionService: service,
        model: 'claude-test',
        logger: silentLogger,
      });
      await claude.call({ sessionId: id, messages: [{ role: 'user', content: 'over Anthropic' }] });
      const messages = anthropic.requests.at(-1)!;
      expect(messages.raw).to.include(LIBRARY_SUMMARY);
      expect(messages.raw).not.to.include('encrypted_content');
      expect(anthropic.rejections).to.deep.equal([]);
    } finally {
      await anthropic.close();
    }
  });

  describe('through the OpenAI Agents session', function () {
    it('CompactingSession stores the compaction and the runner sends the item back verbatim', async function () {
      const runner = new Runner({ modelProvider: new OpenAIProvider({ apiKey: 'k', baseURL: openai.url, useResponses: true }) });
      const agent = new Agent({ name: 'helper', instructions: 'Answer briefly.', model: MODEL });
      const session = new CompactingSession({
        sessionService: service,
        sessionId: 'agents',
        logger: silentLogger,
        compactionTrigger: () => true,
        compactionStrategy: strategy(),
      });
      for (let i = 0; i < 3; i++) await runner.run(agent, `question ${i}`, { session });
      expect(openai.requests.some((r) => r.path === '/v1/responses/compact')).to.equal(true);
      const items = await session.getItems();
      const compaction = items.find((i) => (i as { type?: string }).type === 'compaction') as { encrypted_content: string };
      expect(compaction).to.not.equal(undefined);
      const issued = openai.issued.map((t) => (JSON.parse(t) as { encrypted_content: string }).encrypted_content);
      expect(issued).to.include(compaction.encrypted_content);
      await runner.run(agent, 'one more', { session });
      const turn = openai.requests.filter((r) => r.path === '/v1/responses').at(-1)!;
      expect(turn.raw).to.include(JSON.stringify(compaction.encrypted_content));
      expect(openai.rejections).to.deep.equal([]);
      expect(toAgentItems(await service.getEvents('agents', EventFilter.active()))).to.deep.equal(await session.getItems());
      expect((await service.verifyCoverage('agents')).ok).to.equal(true);
    });
  });
});
