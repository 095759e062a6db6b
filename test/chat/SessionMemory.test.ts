import { createHash } from 'node:crypto';
import { expect } from 'chai';
import {
  CompactionResult,
  EventFilter,
  IdempotentSessionEventIdGenerator,
  IllegalStateError,
  InvalidArgumentError,
  MessageFilter,
  Messages,
  SessionEvent,
  SessionMemory,
  SlidingWindowCompactionStrategy,
  TurnCountTrigger,
  type CompactionRequest,
} from 'session-compaction';
import { OpenAIChatProvider, OpenAISessionMemory } from 'session-compaction/openai';
import {
  CharacterTokenCountEstimator,
  METADATA_TOKEN_CALIBRATION,
  SESSION_ID_CONTEXT_KEY,
  type TokenCalibration,
} from 'session-compaction/spi';
import { expectRejects, expectThrows } from '../support/fixtures.js';
import { contents, echoReplies, harness, roles, type Harness } from './support/harness.js';

describe('SessionMemory (the Java advisor, adapted to the openai client)', function () {
  let h: Harness;

  beforeEach(async function () {
    h = await harness();
    echoReplies(h.server);
  });
  afterEach(async function () {
    await h.close();
  });

  const user = (text: string) => ({ role: 'user' as const, content: text });
  const logTexts = async (id: string) => (await h.service.getEvents(id)).map((e) => e.text);

  describe('construction', function () {
    it('refuses a trigger without a strategy, and a strategy without a trigger', function () {
      const base = { sessionService: h.service, client: h.client, model: 'm' };
      const message = 'compactionTrigger and compactionStrategy must be set together — set both or neither';
      expectThrows(
        () => new OpenAISessionMemory({ ...base, compactionTrigger: new TurnCountTrigger(2) }),
        InvalidArgumentError,
        message,
      );
      expectThrows(
        () => new OpenAISessionMemory({ ...base, compactionStrategy: new SlidingWindowCompactionStrategy({ maxEvents: 2 }) }),
        InvalidArgumentError,
        message,
      );
    });

    it('refuses a missing service, a null message filter and a non-positive window', function () {
      const base = { sessionService: h.service, client: h.client, model: 'm' };
      expectThrows(
        () => new OpenAISessionMemory({ ...base, sessionService: null as never }),
        InvalidArgumentError,
        'sessionService must not be null',
      );
      expectThrows(
        () => new OpenAISessionMemory({ ...base, messageFilter: null as never }),
        InvalidArgumentError,
        'messageFilter must not be null',
      );
      expectThrows(
        () => new OpenAISessionMemory({ ...base, contextWindowTokens: 0 }),
        InvalidArgumentError,
        'contextWindowTokens must be greater than 0',
      );
    });

    it('takes an OpenAI-compatible client as the shorthand for an OpenAIChatProvider', async function () {
      const memory = new SessionMemory({ sessionService: h.service, client: h.client, model: 'm' });
      await memory.call({ sessionId: 'shorthand', userId: 'alice', messages: [user('hello')] });
      expect(await logTexts('shorthand')).to.deep.equal(['hello', 'echo: hello']);
    });

    it('refuses neither a provider nor a client, and both at once', function () {
      expectThrows(
        () => new SessionMemory({ sessionService: h.service, model: 'm' }),
        InvalidArgumentError,
        'client must not be null',
      );
      expectThrows(
        () =>
          new SessionMemory({
            sessionService: h.service,
            model: 'm',
            client: h.client,
            provider: new OpenAIChatProvider(h.client),
          }),
        InvalidArgumentError,
        'set client or provider, not both',
      );
    });
  });

  describe('session resolution', function () {
    it('auto-creates the session on first use, owned by the request user', async function () {
      await h.memory.call({ sessionId: 's1', userId: 'alice', messages: [user('hello')] });
      const session = await h.service.findById('s1');
      expect(session?.userId).to.equal('alice');
      expect(await logTexts('s1')).to.deep.equal(['hello', 'echo: hello']);
    });

    it('auto-creates for defaultUserId when the request has no user', async function () {
      const memory = h.memoryWith({
        defaultUserId: 'anon',
      });
      await memory.call({ sessionId: 's2', messages: [user('hi')] });
      expect((await h.service.findById('s2'))?.userId).to.equal('anon');
      expect(SessionMemory.DEFAULT_USER_ID).to.equal('default-user');
    });

    it("refuses another user's session with the exact message, without calling the model or writing", async function () {
      await h.memory.call({ sessionId: 'owned', userId: 'alice', messages: [user('secret plan')] });
      const before = h.server.requests.length;
      await expectRejects(
        h.memory.call({ sessionId: 'owned', userId: 'bob', messages: [user('let me in')] }),
        IllegalStateError,
        "Session 'owned' does not belong to user 'bob'. Access denied.",
      );
      expect(h.server.requests.length).to.equal(before);
      expect(await logTexts('owned')).to.deep.equal(['secret plan', 'echo: secret plan']);
    });

    it('skips the ownership check when the request carries no user (as the Java advisor)', async function () {
      await h.memory.call({ sessionId: 'owned', userId: 'alice', messages: [user('one')] });
      await h.memory.call({ sessionId: 'owned', messages: [user('two')] });
      expect(await logTexts('owned')).to.deep.equal(['one', 'echo: one', 'two', 'echo: two']);
    });

    it('rejects a blank session id', async function () {
      await expectRejects(
        h.memory.call({ sessionId: '  ', messages: [user('x')] }),
        InvalidArgumentError,
        'sessionId must not be null or empty',
      );
    });
  });

  describe('prompt building', function () {
    it('sends history then the new message, the new message exactly once', async function () {
      await h.memory.call({ sessionId: 's', messages: [user('first')] });
      await h.memory.call({ sessionId: 's', messages: [user('second')] });
      const prompt = h.chatRequests()[1]!;
      expect(contents(prompt)).to.deep.equal(['first', 'echo: first', 'second']);
    });

    it('moves every system message to the front, relative order kept, and never persists request system messages', async function () {
      await h.service.create({ id: 's', userId: 'u' });
      await h.service.appendMessage('s', Messages.user('q1'));
      await h.service.appendMessage('s', Messages.system('stored rule'));
      await h.service.appendMessage('s', Messages.assistant('a1'));
      await h.memory.call({ sessionId: 's', messages: [{ role: 'system', content: 'be brief' }, user('q2')] });
      const prompt = h.chatRequests()[0]!;
      expect(roles(prompt)).to.deep.equal(['system', 'system', 'user', 'assistant', 'user']);
      expect(contents(prompt).slice(0, 2)).to.deep.equal(['stored rule', 'be brief']);
      expect(await logTexts('s')).to.not.include('be brief');
    });

    it('never injects archived events', async function () {
      for (let i = 1; i <= 3; i++) await h.memory.call({ sessionId: 's', messages: [user(`q${i}`)] });
      await h.service.compact('s', () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
      await h.memory.call({ sessionId: 's', messages: [user('q4')] });
      expect(contents(h.chatRequests()[3]!)).to.deep.equal(['q3', 'echo: q3', 'q4']);
    });

    it('merges the per-request filter over the memory filter', async function () {
      for (let i = 1; i <= 3; i++) await h.memory.call({ sessionId: 's', messages: [user(`q${i}`)] });
      await h.memory.call({ sessionId: 's', messages: [user('q4')], filter: EventFilter.lastN(2) });
      expect(contents(h.chatRequests()[3]!)).to.deep.equal(['q3', 'echo: q3', 'q4']);
    });

    it('reads with the memory filter (e.g. only real events)', async function () {
      const memory = h.memoryWith({
        eventFilter: EventFilter.realOnly(),
      });
      await h.service.create({ id: 's', userId: 'u' });
      await h.service.appendMessage('s', Messages.user('synthetic note'), { metadata: { synthetic: true } });
      await h.service.appendMessage('s', Messages.user('real'));
      await memory.call({ sessionId: 's', messages: [user('next')] });
      expect(contents(h.chatRequests()[0]!)).to.deep.equal(['real', 'next']);
    });

    it('passes extra chat parameters through and lets a request override the model', async function () {
      await h.memory.call({ sessionId: 's', messages: [user('x')], temperature: 0.25, max_tokens: 33 });
      const body = h.server.requests[0]!;
      expect(body.temperature).to.equal(0.25);
      expect(body.max_tokens).to.equal(33);
      expect(body).to.not.have.property('sessionId');
      await h.memory.call({ sessionId: 's', messages: [user('y')], model: 'other-model' });
      expect(h.server.requests[1]!.model).to.equal('other-model');
    });
  });

  describe('persistence', function () {
    it("stores a request message's participant name and sends it back with the history on the next call", async function () {
      await h.memory.call({ sessionId: 's', messages: [{ role: 'user', content: 'hi', name: 'Caroline' }] });
      const [stored] = await h.service.getEvents('s');
      expect(stored!.message).to.deep.equal({ type: 'user', text: 'hi', name: 'Caroline' });
      await h.memory.call({ sessionId: 's', messages: [user('again')] });
      const history = h.chatRequests()[1]!.messages ?? [];
      expect(history[0]).to.deep.include({ role: 'user', content: 'hi', name: 'Caroline' });
    });

    it('skips an empty assistant reply by default (the Bedrock end_turn frame)', async function () {
      h.server.enqueue({ content: '' });
      const response = await h.memory.call({ sessionId: 's', messages: [user('hi')] });
      expect(response.message.content).to.equal('');
      expect(await logTexts('s')).to.deep.equal(['hi']);
    });

    it('persists what a custom MessageFilter accepts, nothing else', async function () {
      const memory = h.memoryWith({
        messageFilter: MessageFilter.byMessageType('assistant'),
      });
      await memory.call({ sessionId: 's', messages: [user('not stored')] });
      expect(await logTexts('s')).to.deep.equal(['echo: not stored']);
    });

    it('persists a tool-call reply, then the tool results as one tool event with names resolved', async function () {
      h.server.enqueue({
        content: null,
        toolCalls: [
          { id: 'call-1', name: 'get_weather', arguments: '{"location":"Paris"}' },
          { id: 'call-2', name: 'get_time', arguments: '{"tz":"CET"}' },
        ],
      });
      const first = await h.memory.call({ sessionId: 's', messages: [user('weather and time?')] });
      expect(first.message.tool_calls).to.have.length(2);
      await h.memory.call({
        sessionId: 's',
        messages: [
          { role: 'tool', tool_call_id: 'call-1', content: '{"temp":"22C"}' },
          { role: 'tool', tool_call_id: 'call-2', content: '{"time":"10:00"}' },
        ],
      });
      const events = await h.service.getEvents('s');
      expect(events.map((e) => e.messageType)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
      expect(events[1]!.message).to.deep.include({ type: 'assistant', text: null });
      expect(events[1]!.hasToolCalls()).to.equal(true);
      expect(events[2]!.message).to.deep.equal(
        Messages.tool([
          Messages.toolResponse('call-1', 'get_weather', '{"temp":"22C"}'),
          Messages.toolResponse('call-2', 'get_time', '{"time":"10:00"}'),
        ]),
      );
      // The second prompt replays the tool call before the tool results, as OpenAI requires.
      expect(roles(h.chatRequests()[1]!)).to.deep.equal(['user', 'assistant', 'tool', 'tool']);
    });

    it('writes root events (branch null)', async function () {
      await h.memory.call({ sessionId: 's', messages: [user('x')] });
      expect((await h.service.getEvents('s')).every((e) => e.isRootEvent())).to.equal(true);
    });
  });

  describe('idempotent event ids', function () {
    const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

    it('derives ids as the Java generator does: fingerprint, type, sha256', function () {
      const gen = new IdempotentSessionEventIdGenerator();
      const ctx = { [SESSION_ID_CONTEXT_KEY]: 'conv-1' };
      const fp = 'chat_memory_conversation_id:conv-1';
      expect(gen.generate(ctx, Messages.user('hello'))).to.equal(`${fp}:USER:${sha(`${fp}:USER:hello`)}`);
      expect(gen.generate(ctx, Messages.assistant(null))).to.equal(`${fp}:ASSISTANT:${sha(`${fp}:ASSISTANT:`)}`);
      expect(
        gen.generate(
          ctx,
          Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'f', '{}'), Messages.toolCall('c2', 'g', '{}')] }),
        ),
      ).to.equal(`${fp}:toolcall:c1,c2`);
      expect(gen.generate(ctx, Messages.tool([Messages.toolResponse('c1', 'f', 'r')]))).to.equal(`${fp}:toolresp:c1`);
    });

    it('two participants sending the same words get two ids; an unnamed message keeps its id', function () {
      const gen = new IdempotentSessionEventIdGenerator();
      const ctx = { [SESSION_ID_CONTEXT_KEY]: 'conv-1' };
      const fp = 'chat_memory_conversation_id:conv-1';
      const ann = gen.generate(ctx, Messages.user('yes', { name: 'Ann' }));
      expect(ann).to.equal(`${fp}:USER:${sha(`${fp}:USER@Ann:yes`)}`);
      expect(gen.generate(ctx, Messages.user('yes', { name: 'Bob' }))).not.to.equal(ann);
      expect(gen.generate(ctx, Messages.user('yes'))).not.to.equal(ann);
    });

    it('uses the complete ordered key list given, rendering a missing key as null', function () {
      const gen = new IdempotentSessionEventIdGenerator(['requestId', SESSION_ID_CONTEXT_KEY]);
      expect(gen.fingerprint({ [SESSION_ID_CONTEXT_KEY]: 's' })).to.equal('requestId:null,chat_memory_conversation_id:s');
      expectThrows(() => new IdempotentSessionEventIdGenerator([]), InvalidArgumentError, 'contextKeys must not be empty');
    });

    it('a retried request appends nothing new and sends the prompt of the first attempt', async function () {
      const gen = new IdempotentSessionEventIdGenerator([SESSION_ID_CONTEXT_KEY, 'requestId']);
      const memory = h.memoryWith({
        requestIdGenerator: gen,
        responseIdGenerator: gen,
      });
      await memory.call({ sessionId: 's', messages: [user('q1')], context: { requestId: 'r1' } });
      await memory.call({ sessionId: 's', messages: [user('q2')], context: { requestId: 'r2' } });
      await memory.call({ sessionId: 's', messages: [user('q2')], context: { requestId: 'r2' } }); // the retry
      expect(await logTexts('s')).to.deep.equal(['q1', 'echo: q1', 'q2', 'echo: q2']);
      const [, second, retry] = h.chatRequests();
      expect(contents(retry!)).to.deep.equal(contents(second!));
    });

    it('the same text under different request ids is two turns', async function () {
      const gen = new IdempotentSessionEventIdGenerator([SESSION_ID_CONTEXT_KEY, 'requestId']);
      const memory = h.memoryWith({
        requestIdGenerator: gen,
      });
      await memory.call({ sessionId: 's', messages: [user('again')], context: { requestId: 'a' } });
      await memory.call({ sessionId: 's', messages: [user('again')], context: { requestId: 'b' } });
      expect((await logTexts('s')).filter((t) => t === 'again')).to.have.length(2);
    });

    it('random ids by default: a retry is a new turn', async function () {
      await h.memory.call({ sessionId: 's', messages: [user('same')] });
      await h.memory.call({ sessionId: 's', messages: [user('same')] });
      expect(await logTexts('s')).to.have.length(4);
    });
  });

  describe('compaction and context status', function () {
    const sliding = () => new SlidingWindowCompactionStrategy({ maxEvents: 2 });

    it('compacts after the reply with its trigger and strategy, and reports it', async function () {
      const memory = h.memoryWith({
        compactionTrigger: new TurnCountTrigger(2),
        compactionStrategy: sliding(),
      });
      const r1 = await memory.call({ sessionId: 's', messages: [user('q1')] });
      const r2 = await memory.call({ sessionId: 's', messages: [user('q2')] });
      const r3 = await memory.call({ sessionId: 's', messages: [user('q3')] });
      expect(r1.compaction).to.equal(undefined);
      expect(r2.compaction).to.equal(undefined);
      expect(r3.compaction?.archivedEvents.map((e) => e.text)).to.deep.equal(['q1', 'echo: q1', 'q2', 'echo: q2']);
      const active = await h.service.getEvents('s', EventFilter.active());
      expect(active.map((e) => e.text)).to.deep.equal(['q3', 'echo: q3']);
    });

    it("is 'full' without a summary in the context and 'summarized' with one", async function () {
      const summarise = async (req: CompactionRequest) => {
        const [head, ...rest] = req.events;
        const summary = SessionEvent.create({
          sessionId: req.session.id,
          message: Messages.assistant('summary of q1'),
          metadata: { synthetic: true, compactionSource: 'test' },
        });
        return new CompactionResult([summary, ...rest.slice(1)], [head!, rest[0]!], 1);
      };
      const memory = h.memoryWith({
        compactionTrigger: new TurnCountTrigger(1),
        compactionStrategy: summarise,
      });
      const r1 = await memory.call({ sessionId: 's', messages: [user('q1')] });
      const r2 = await memory.call({ sessionId: 's', messages: [user('q2')] }); // compacts after its reply
      const r3 = await memory.call({ sessionId: 's', messages: [user('q3')] });
      expect([r1.contextStatus, r2.contextStatus, r3.contextStatus]).to.deep.equal(['full', 'full', 'summarized']);
      expect(contents(h.chatRequests()[2]!)).to.deep.equal(['summary of q1', 'q2', 'echo: q2', 'q3']);
    });

    it('compacts BEFORE the call when the prompt would exceed contextWindowTokens', async function () {
      const estimator = new CharacterTokenCountEstimator();
      const memory = h.memoryWith({
        tokenCountEstimator: estimator,
        contextWindowTokens: 80,
        // The window arithmetic below is in raw characters: no learned ratio may scale it.
        calibrate: false,
        compactionTrigger: () => false,
        compactionStrategy: sliding(),
      });
      // A turn costs "User: question i" (16) + "Assistant: echo: question i" (27) = 43 characters.
      const r1 = await memory.call({ sessionId: 's', messages: [user('question 1')] });
      const r2 = await memory.call({ sessionId: 's', messages: [user('question 2')] }); // 43 + 16 fits
      const r3 = await memory.call({ sessionId: 's', messages: [user('question 3')] }); // 86 + 16 does not
      expect([r1.compaction, r2.compaction]).to.deep.equal([undefined, undefined]);
      expect(r3.compaction?.archivedEvents.map((e) => e.text)).to.deep.equal(['question 1', 'echo: question 1']);
      expect(contents(h.chatRequests()[2]!)).to.deep.equal(['question 2', 'echo: question 2', 'question 3']);
    });

    it('fails rather than send a prompt over the window that compaction cannot shrink', async function () {
      const memory = h.memoryWith({
        tokenCountEstimator: new CharacterTokenCountEstimator(),
        contextWindowTokens: 20,
      });
      const sent = h.server.requests.length;
      await expectRejects(
        memory.call({ sessionId: 's', messages: [user('a message far longer than twenty characters')] }),
        IllegalStateError,
        'more than contextWindowTokens (20)',
      );
      expect(h.server.requests.length).to.equal(sent);
    });

    it('a failing compaction does not fail the turn: the reply is stored and compactionFailed is emitted', async function () {
      const failures: unknown[] = [];
      h.service.events.on('compactionFailed', (e) => failures.push(e.error));
      const memory = h.memoryWith({
        compactionTrigger: () => true,
        compactionStrategy: async () => {
          throw new Error('summariser exploded');
        },
      });
      const r = await memory.call({ sessionId: 's', messages: [user('q')] });
      expect(r.message.content).to.equal('echo: q');
      expect(r.compaction).to.equal(undefined);
      expect(await logTexts('s')).to.deep.equal(['q', 'echo: q']);
      expect(String(failures[0])).to.include('summariser exploded');
    });
  });

  describe('lifecycle events reach the application through SessionMemory flows', function () {
    const names: string[] = [];
    beforeEach(function () {
      names.length = 0;
      h.service.events.on('compactionStarted', () => names.push('started'));
      h.service.events.on('compactionCompleted', () => names.push('completed'));
      h.service.events.on('compactionSkipped', (e) => names.push(`skipped:${e.reason}`));
    });
    const memoryWith = (trigger: () => boolean, strategy: (r: CompactionRequest) => Promise<CompactionResult>) =>
      h.memoryWith({
        compactionTrigger: trigger,
        compactionStrategy: strategy,
      });
    const sliding = new SlidingWindowCompactionStrategy({ maxEvents: 2 });

    it('trigger-not-fired', async function () {
      await memoryWith(
        () => false,
        (r) => sliding.compact(r),
      ).call({ sessionId: 's', messages: [user('q')] });
      expect(names).to.deep.equal(['skipped:trigger-not-fired']);
    });

    it('nothing-to-archive', async function () {
      await memoryWith(
        () => true,
        async (r) => CompactionResult.noop(r.events),
      ).call({ sessionId: 's', messages: [user('q')] });
      expect(names).to.deep.equal(['started', 'skipped:nothing-to-archive']);
    });

    it('summarization-failed', async function () {
      await memoryWith(
        () => true,
        async (r) => CompactionResult.noop(r.events, 'summarization-failed'),
      ).call({
        sessionId: 's',
        messages: [user('q')],
      });
      expect(names).to.deep.equal(['started', 'skipped:summarization-failed']);
    });

    it('cas-conflict, when an append lands while the strategy runs', async function () {
      const memory = memoryWith(
        () => true,
        async (r) => {
          await h.service.appendMessage(r.session.id, Messages.user('raced in'));
          return sliding.compact(r);
        },
      );
      for (let i = 1; i <= 2; i++) await memory.call({ sessionId: 's', messages: [user(`q${i}`)] });
      expect(names).to.include('skipped:cas-conflict');
    });

    it('started then completed on a real compaction', async function () {
      const memory = memoryWith(
        () => true,
        (r) => sliding.compact(r),
      );
      for (let i = 1; i <= 2; i++) await memory.call({ sessionId: 's', messages: [user(`q${i}`)] });
      expect(names.slice(-2)).to.deep.equal(['started', 'completed']);
    });
  });

  describe('calibration', function () {
    it("folds the provider's prompt tokens against our estimate into the session metadata", async function () {
      const memory = h.memoryWith({
        tokenCountEstimator: new CharacterTokenCountEstimator(),
        metadataStore: h.repository,
      });
      // Our estimate of the prompt: "User: hi there" = 14 characters; the provider reports 21.
      h.server.enqueue({ content: 'ok', usage: { prompt_tokens: 21, completion_tokens: 1 } });
      await memory.call({ sessionId: 's', messages: [user('hi there')] });
      const calibration = (await h.service.findById('s'))!.metadata[METADATA_TOKEN_CALIBRATION] as TokenCalibration;
      expect(calibration.samples).to.equal(1);
      expect(calibration.ratio).to.be.closeTo(1.5, 1e-9);
    });

    it('records through the service’s updateMetadata when no store is given', async function () {
      const memory = h.memoryWith({});
      await memory.call({ sessionId: 's', messages: [user('hi')] });
      expect((await h.service.findById('s'))!.metadata).to.have.property(METADATA_TOKEN_CALIBRATION);
    });

    it('records nothing with calibrate: false', async function () {
      const memory = h.memoryWith({
        calibrate: false,
      });
      await memory.call({ sessionId: 's', messages: [user('hi')] });
      expect((await h.service.findById('s'))!.metadata).to.not.have.property(METADATA_TOKEN_CALIBRATION);
    });
  });
});
