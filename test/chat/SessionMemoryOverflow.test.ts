import { expect } from 'chai';
import {
  ContextOverflowError,
  EventFilter,
  TokenCountCompactionStrategy,
  TurnCountTrigger,
  type SessionMemoryStreamEvent,
} from 'session-compaction';
import type { OpenAIChatTypes } from 'session-compaction/openai';
import { METADATA_TOKEN_CALIBRATION, type TokenCalibration } from 'session-compaction/spi';
import type { FakeRequestBody } from '../support/fakeOpenAIServer.js';
import { openAIContextLengthExceeded } from '../support/providerRefusals.js';
import { rejection } from '../support/rejection.js';
import { CHAT_MODEL, harness, type Harness } from './support/harness.js';

/** The fake model's own count of a prompt: JSON characters / 4, far from our tokenizer's estimate. */
const providerTokens = (body: FakeRequestBody) => Math.ceil(JSON.stringify(body.messages ?? []).length / 4);

describe('SessionMemory: recovery from a provider context-overflow refusal (OpenAI)', function () {
  let h: Harness;
  /** The fake model's context window; Infinity while a session is being filled. */
  let window = Infinity;
  let refuseAll = false;

  const user = (text: string) => ({ role: 'user' as const, content: text });
  const question = (i: number) => `Question ${i}: ${'please describe the deployment pipeline in detail '.repeat(6)}`;

  beforeEach(async function () {
    window = Infinity;
    refuseAll = false;
    h = await harness();
    h.server.respondWith((body) => {
      const tokens = providerTokens(body);
      if (refuseAll || tokens > window) return openAIContextLengthExceeded(Number.isFinite(window) ? window : 1000, tokens);
      return { content: `answer to ${String((body.messages ?? []).at(-1)?.content).slice(0, 12)}` };
    });
  });
  afterEach(async function () {
    await h.close();
  });

  async function fill(sessionId: string, turns: number): Promise<void> {
    for (let i = 1; i <= turns; i++) await h.memory.call({ sessionId, messages: [user(question(i))] });
  }

  it("a first prompt refused with OpenAI's context_length_exceeded: the turn succeeds after exactly one retry", async function () {
    await fill('s1', 8);
    const before = h.chatRequests().length;
    window = Math.floor(providerTokens(h.chatRequests().at(-1)!) * 0.6);

    const response = await h.memory.call({ sessionId: 's1', messages: [user('And the rollback plan?')] });

    const turn = h.chatRequests().slice(before);
    expect(turn).to.have.length(2);
    expect(h.server.requests.filter((r) => r.model !== CHAT_MODEL)).to.have.length(0); // no summariser call
    expect(providerTokens(turn[0]!)).to.be.greaterThan(window);
    expect(providerTokens(turn[1]!)).to.be.at.most(window);
    expect(turn[1]!.messages!.at(-1)).to.deep.equal(user('And the rollback plan?'));
    expect(response.overflow).to.deep.include({ promptTokens: providerTokens(turn[0]!), limitTokens: window });
    expect(response.compaction!.archivedEvents.length).to.be.greaterThan(0);
    // The user's message is stored once; the archived turns are still in the log.
    const all = await h.service.getEvents('s1', EventFilter.all());
    expect(all.filter((e) => e.text === 'And the rollback plan?')).to.have.length(1);
    expect(all.filter((e) => e.isArchived()).map((e) => e.id)).to.have.members(
      response.compaction!.archivedEvents.map((e) => e.id),
    );
    expect(all).to.have.length(8 * 2 + 2);
  });

  it('calibrates the estimate from the refusal, so the next turn is compacted before the call instead of refused', async function () {
    // An endpoint whose usage under-reports the prompt (half of it): calibration from usage alone stays too low.
    h.server.respondWith((body) => {
      const tokens = providerTokens(body);
      if (tokens > window) return openAIContextLengthExceeded(window, tokens);
      return { content: 'ok', usage: { prompt_tokens: Math.ceil(tokens / 2), completion_tokens: 1 } };
    });
    window = 1500;
    const memory = h.memoryWith({
      metadataStore: h.repository,
      contextWindowTokens: window,
      compactionTrigger: new TurnCountTrigger(1000),
      compactionStrategy: new TokenCountCompactionStrategy({ maxTokens: 300 }),
    });
    const calibration = async () =>
      (await h.service.findById('s2'))?.metadata[METADATA_TOKEN_CALIBRATION] as TokenCalibration | undefined;
    const requestsPerTurn: number[] = [];
    let refused: Awaited<ReturnType<typeof memory.call>> | undefined;
    let ratioBefore = 1;
    for (let i = 1; i <= 40 && refused === undefined; i++) {
      ratioBefore = (await calibration())?.ratio ?? 1;
      const before = h.chatRequests().length;
      const response = await memory.call({ sessionId: 's2', messages: [user(question(i))] });
      requestsPerTurn.push(h.chatRequests().length - before);
      if (response.overflow !== undefined) refused = response;
    }
    expect(refused, 'the under-reported usage let a prompt through that the model refused').to.not.equal(undefined);
    expect(requestsPerTurn.at(-1)).to.equal(2);
    // Usage samples had averaged the ratio too low; the refusal's own measure raised it, and stays its floor.
    const raised = (await calibration())!;
    expect(raised.floor).to.be.greaterThan(ratioBefore);
    expect(raised.ratio).to.equal(raised.floor);

    // The following turns: the guard, with the raised ratio, compacts ahead of the model; none is refused.
    const after: number[] = [];
    let compacted = 0;
    for (let i = 100; i < 110; i++) {
      const before = h.chatRequests().length;
      const next = await memory.call({ sessionId: 's2', messages: [user(question(i))] });
      after.push(h.chatRequests().length - before);
      if (next.compaction !== undefined) compacted++;
    }
    expect(after).to.deep.equal(new Array(10).fill(1));
    expect(compacted).to.be.greaterThan(0);
    expect((await calibration())!.ratio).to.be.at.least(raised.floor!);
  });

  it('a provider that refuses everything: one ContextOverflowError naming the session after one retry, nothing lost', async function () {
    await fill('s3', 6);
    refuseAll = true;
    const before = h.chatRequests().length;

    const error = await rejection(h.memory.call({ sessionId: 's3', messages: [user('still there?')] }));

    expect(error).to.be.instanceOf(ContextOverflowError);
    const overflow = error as ContextOverflowError;
    expect(overflow.sessionId).to.equal('s3');
    expect(overflow.message).to.include("Session 's3'");
    expect(overflow.attempts).to.equal(2);
    expect(h.chatRequests().length - before).to.equal(2);
    const all = await h.service.getEvents('s3', EventFilter.all());
    expect(all.map((e) => e.text)).to.include('still there?');
    expect(all).to.have.length(6 * 2 + 1);
    expect(overflow.persisted.map((e) => e.text)).to.deep.equal(['still there?']);
  });

  it('with nothing left to archive it does not send the same prompt again: one refusal, one error', async function () {
    window = 50;
    const error = await rejection(h.memory.call({ sessionId: 's4', messages: [user(question(1))] }));
    expect(error).to.be.instanceOf(ContextOverflowError);
    expect((error as ContextOverflowError).attempts).to.equal(1);
    expect(h.chatRequests()).to.have.length(1);
    expect((await h.service.getEvents('s4')).map((e) => e.text)).to.deep.equal([question(1)]);
  });

  it('a streamed turn refused before its first chunk reports the overflow, then streams the retried reply', async function () {
    await fill('s5', 8);
    window = Math.floor(providerTokens(h.chatRequests().at(-1)!) * 0.6);
    const before = h.chatRequests().length;
    const events: SessionMemoryStreamEvent<OpenAIChatTypes>[] = [];
    for await (const event of h.memory.stream({ sessionId: 's5', messages: [user('stream it')] })) events.push(event);

    const types = events.map((e) => e.type);
    expect(types[0]).to.equal('context_overflow');
    expect(types).to.include('compaction_completed');
    expect(types.indexOf('compaction_completed')).to.be.lessThan(types.indexOf('chunk'));
    expect(types.at(-1)).to.equal('done');
    expect(h.chatRequests().length - before).to.equal(2);
    const done = events.at(-1) as Extract<SessionMemoryStreamEvent<OpenAIChatTypes>, { type: 'done' }>;
    expect(done.response.message.content).to.match(/^answer to/);
  });

  it('another refusal (not an overflow) is the SDK error as it was, with no retry', async function () {
    h.server.enqueue({
      status: 400,
      rawBody: JSON.stringify({ error: { message: 'Invalid value for temperature', type: 'invalid_request_error', code: null } }),
    });
    const error = await rejection(h.memory.call({ sessionId: 's6', messages: [user('hi')] }));
    expect(error).to.not.be.instanceOf(ContextOverflowError);
    expect(error.message).to.include('Invalid value for temperature');
    expect(h.chatRequests()).to.have.length(1);
  });

  it('with recoverOverflow false the refusal reaches the caller untouched', async function () {
    await fill('s7', 4);
    refuseAll = true;
    const memory = h.memoryWith({ compaction: { recoverOverflow: false } });
    const before = h.chatRequests().length;
    const error = await rejection(memory.call({ sessionId: 's7', messages: [user('hi')] }));
    expect(error).to.not.be.instanceOf(ContextOverflowError);
    expect((error as { code?: string }).code).to.equal('context_length_exceeded');
    expect(h.chatRequests().length - before).to.equal(1);
  });
});
