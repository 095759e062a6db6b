import { expect } from 'chai';
import {
  IllegalStateError,
  OpenAIChatClient,
  RecursiveSummarizationCompactionStrategy,
  TurnCountTrigger,
  type SessionMemoryStreamEvent,
} from 'session-compaction';
import type { OpenAIChatTypes } from 'session-compaction/openai';
import { expectRejects } from '../support/fixtures.js';
import { contents, echoReplies, harness, silent, type Harness } from './support/harness.js';

const SUMMARY_MODEL = 'summary-model';

async function collect(
  stream: AsyncIterable<SessionMemoryStreamEvent<OpenAIChatTypes>>,
): Promise<SessionMemoryStreamEvent<OpenAIChatTypes>[]> {
  const items: SessionMemoryStreamEvent<OpenAIChatTypes>[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

const chunkText = (items: SessionMemoryStreamEvent<OpenAIChatTypes>[]) =>
  items
    .filter((i) => i.type === 'chunk')
    .map((i) => (i.type === 'chunk' ? (i.chunk.choices[0]?.delta.content ?? '') : ''))
    .join('');

describe('SessionMemory.stream', function () {
  let h: Harness;
  beforeEach(async function () {
    h = await harness();
    echoReplies(h.server);
  });
  afterEach(async function () {
    await h.close();
  });
  const user = (text: string) => ({ role: 'user' as const, content: text });

  it('yields the chunks, persists the aggregated reply once and ends with done', async function () {
    const items = await collect(h.memory.stream({ sessionId: 's', userId: 'u', messages: [user('stream me a long answer')] }));
    expect(items.filter((i) => i.type === 'chunk').length).to.be.greaterThan(2);
    expect(chunkText(items)).to.equal('echo: stream me a long answer');
    const done = items[items.length - 1]!;
    expect(done.type).to.equal('done');
    if (done.type !== 'done') return;
    expect(done.response.message.content).to.equal('echo: stream me a long answer');
    expect(done.response.contextStatus).to.equal('full');
    expect(done.response.usage?.prompt_tokens).to.be.greaterThan(0);
    expect((await h.service.getEvents('s')).map((e) => e.text)).to.deep.equal([
      'stream me a long answer',
      'echo: stream me a long answer',
    ]);
    expect(h.server.requests[0]!.stream).to.equal(true);
    expect(h.server.requests[0]!.stream_options).to.deep.equal({ include_usage: true });
  });

  it('aggregates streamed tool calls into the persisted reply', async function () {
    h.server.enqueue({ content: null, toolCalls: [{ id: 'call-9', name: 'lookup', arguments: '{"q":"order 42"}' }] });
    await collect(h.memory.stream({ sessionId: 's', messages: [user('find order 42')] }));
    const reply = (await h.service.getEvents('s'))[1]!;
    expect(reply.message).to.deep.equal({
      type: 'assistant',
      text: null,
      toolCalls: [{ id: 'call-9', type: 'function', name: 'lookup', arguments: '{"q":"order 42"}' }],
    });
  });

  it('emits compaction_started before the summariser call completes, then compaction_completed, then done', async function () {
    let sawStarted!: () => void;
    const started = new Promise<void>((resolve) => (sawStarted = resolve));
    let startedBeforeSummaryReturned: boolean | undefined;
    h.server.respondWith(async (body) => {
      if (body.model !== SUMMARY_MODEL) return { content: `answer ${h.server.requests.length}` };
      // The summary reply is held until the client has seen compaction_started (or 3 s pass).
      startedBeforeSummaryReturned = await Promise.race([
        started.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 3000)),
      ]);
      return { content: 'SUMMARY: the user asked two questions.' };
    });
    const memory = h.memoryWith({
      compactionTrigger: new TurnCountTrigger(1),
      compactionStrategy: new RecursiveSummarizationCompactionStrategy({
        chatClient: new OpenAIChatClient({ client: h.client, model: SUMMARY_MODEL, logger: silent }),
        maxEventsToKeep: 2,
        overlapSize: 1,
        logger: silent,
      }),
    });
    await collect(memory.stream({ sessionId: 's', messages: [user('q1')] }));
    const types: string[] = [];
    for await (const item of memory.stream({ sessionId: 's', messages: [user('q2')] })) {
      types.push(item.type);
      if (item.type === 'compaction_started') sawStarted();
    }
    expect(startedBeforeSummaryReturned).to.equal(true);
    const compactionTypes = types.filter((t) => t !== 'chunk');
    expect(compactionTypes).to.deep.equal(['compaction_started', 'compaction_completed', 'done']);
    const third = await collect(memory.stream({ sessionId: 's', messages: [user('q3')] }));
    const done = third[third.length - 1]!;
    expect(done.type === 'done' && done.response.contextStatus).to.equal('summarized');
    const lastChatPrompt = h.chatRequests().at(-1)!;
    expect(contents(lastChatPrompt)[1]).to.equal('SUMMARY: the user asked two questions.');
  });

  it('reports compaction_skipped after compaction_started when the summary fails (and no fallback is set)', async function () {
    h.server.respondWith((body) => (body.model === SUMMARY_MODEL ? { status: 500 } : { content: 'fine' }));
    const memory = h.memoryWith({
      compaction: { fallback: false },
      compactionTrigger: new TurnCountTrigger(1),
      compactionStrategy: new RecursiveSummarizationCompactionStrategy({
        chatClient: new OpenAIChatClient({ client: h.client, model: SUMMARY_MODEL, maxRetries: 0, logger: silent }),
        maxEventsToKeep: 2,
        overlapSize: 1,
        logger: silent,
      }),
    });
    await collect(memory.stream({ sessionId: 's', messages: [user('q1')] }));
    const items = await collect(memory.stream({ sessionId: 's', messages: [user('q2')] }));
    const nonChunks = items.filter((i) => i.type !== 'chunk');
    expect(nonChunks.map((i) => i.type)).to.deep.equal(['compaction_started', 'compaction_skipped', 'done']);
    expect(nonChunks[1]!.type === 'compaction_skipped' && nonChunks[1]!.reason).to.equal('summarization-failed');
    expect(await h.service.getEvents('s')).to.have.length(4);
  });

  it('surfaces an ownership violation on the first read, before any model call', async function () {
    await collect(h.memory.stream({ sessionId: 's', userId: 'alice', messages: [user('mine')] }));
    const calls = h.server.requests.length;
    await expectRejects(
      collect(h.memory.stream({ sessionId: 's', userId: 'mallory', messages: [user('yours?')] })),
      IllegalStateError,
      "Session 's' does not belong to user 'mallory'. Access denied.",
    );
    expect(h.server.requests.length).to.equal(calls);
  });

  it('an aborted request stops the model call and stores no reply', async function () {
    h.server.enqueue({ content: 'too late', delayMs: 5000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    let failed = false;
    try {
      await collect(h.memory.stream({ sessionId: 's', messages: [user('slow one')], signal: controller.signal }));
    } catch {
      failed = true;
    }
    expect(failed).to.equal(true);
    expect((await h.service.getEvents('s')).map((e) => e.text)).to.deep.equal(['slow one']);
  });
});
