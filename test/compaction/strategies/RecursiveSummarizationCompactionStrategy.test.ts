import { expect } from 'chai';
import {
  CompactionRequest,
  InvalidArgumentError,
  RecursiveSummarizationCompactionStrategy,
  type ChatClient,
  type SessionEvent,
} from 'session-compaction';
import type { RecursiveSummarizationCompactionStrategyOptions } from 'session-compaction/spi';
import {
  A,
  CharEstimator,
  SA,
  SU,
  TC,
  TR,
  U,
  compactionRequest,
  expectRejects,
  expectThrows,
  msgs,
  texts,
} from '../../support/fixtures.js';
import { SUMMARY, ScriptedChatClient, silentLogger } from '../../summarization/support.js';

const DEFAULT_SHADOW = 'Summarize the conversation we had so far.';

function strategy(
  client: ChatClient,
  options: Partial<RecursiveSummarizationCompactionStrategyOptions> = {},
): RecursiveSummarizationCompactionStrategy {
  return new RecursiveSummarizationCompactionStrategy({
    chatClient: client,
    tokenCountEstimator: new CharEstimator(),
    logger: silentLogger,
    ...options,
  });
}

const ids = (events: readonly SessionEvent[]) => events.map((e) => e.id);

describe('RecursiveSummarizationCompactionStrategy', function () {
  it('66: maxEventsToKeep 10 with 5 events is a no-op and never calls the model', async function () {
    const client = new ScriptedChatClient();
    const result = await strategy(client, { maxEventsToKeep: 10 }).compact(compactionRequest(msgs(5)));
    expect(result.compactedEvents).to.have.length(5);
    expect(result.archivedEvents).to.deep.equal([]);
    expect(client.callCount).to.equal(0);
  });

  it('67: exactly maxEventsToKeep events is a no-op without a model call', async function () {
    const client = new ScriptedChatClient();
    const result = await strategy(client, { maxEventsToKeep: 5 }).compact(compactionRequest(msgs(5)));
    expect(result.compactedEvents).to.have.length(5);
    expect(result.eventsRemoved).to.equal(0);
    expect(client.callCount).to.equal(0);
  });

  it('68: max 3, overlap 0, 6 events → [S_U, S_A(SUMMARY), msg-4, msg-5, msg-6]', async function () {
    const result = await strategy(new ScriptedChatClient(), { maxEventsToKeep: 3, overlapSize: 0 }).compact(
      compactionRequest(msgs(6)),
    );
    const c = result.compactedEvents;
    expect(c).to.have.length(5);
    expect(c[0]!.messageType).to.equal('user');
    expect(c[0]!.isSynthetic()).to.equal(true);
    expect(c[1]!.messageType).to.equal('assistant');
    expect(c[1]!.isSynthetic()).to.equal(true);
    expect(c[1]!.text).to.equal(SUMMARY);
    expect(texts(c.slice(2))).to.deep.equal(['msg-4', 'msg-5', 'msg-6']);
  });

  it('69: max 2, overlap 0, 5 events → archives exactly msg-1..3', async function () {
    const result = await strategy(new ScriptedChatClient(), { maxEventsToKeep: 2, overlapSize: 0 }).compact(
      compactionRequest(msgs(5)),
    );
    expect(texts(result.archivedEvents)).to.deep.equal(['msg-1', 'msg-2', 'msg-3']);
    expect(result.eventsRemoved).to.equal(3);
  });

  it('70: a prior summary pair is replaced by the new one and never archived', async function () {
    const prior = [SU(DEFAULT_SHADOW), SA('Prior summary text')];
    const events = [...prior, ...msgs(4)];
    const result = await strategy(new ScriptedChatClient(), { maxEventsToKeep: 2, overlapSize: 0 }).compact(
      compactionRequest(events),
    );
    expect(texts(result.archivedEvents)).to.deep.equal(['msg-1', 'msg-2']);
    expect(result.archivedEvents.some((e) => e.isSynthetic())).to.equal(false);
    const c = result.compactedEvents;
    expect(c).to.have.length(4);
    expect(c[0]!.isSynthetic() && c[0]!.text).to.equal(DEFAULT_SHADOW);
    expect(c[1]!.text).to.equal(SUMMARY);
    expect(texts(c.slice(2))).to.deep.equal(['msg-3', 'msg-4']);
    expect(ids(c)).to.not.include.members(ids(prior));
  });

  it('71: a custom shadow prompt opens the summary pair', async function () {
    const shadowPrompt = 'Bitte fasse unser bisheriges Gespräch zusammen.';
    const result = await strategy(new ScriptedChatClient(), { maxEventsToKeep: 2, overlapSize: 0, shadowPrompt }).compact(
      compactionRequest(msgs(4)),
    );
    expect(result.compactedEvents[0]!.messageType).to.equal('user');
    expect(result.compactedEvents[0]!.isSynthetic()).to.equal(true);
    expect(result.compactedEvents[0]!.text).to.equal(shadowPrompt);
  });

  it('72: both summary events carry compactionSource "recursive-summarization"', async function () {
    const result = await strategy(new ScriptedChatClient(), { maxEventsToKeep: 1, overlapSize: 0 }).compact(
      compactionRequest(msgs(3)),
    );
    for (const e of result.compactedEvents.slice(0, 2)) {
      expect(e.isSynthetic()).to.equal(true);
      expect(e.metadata.compactionSource).to.equal('recursive-summarization');
    }
  });

  it('73: the pair is [user default shadow prompt, assistant SUMMARY]', async function () {
    const result = await strategy(new ScriptedChatClient(), { maxEventsToKeep: 2, overlapSize: 0 }).compact(
      compactionRequest(msgs(4)),
    );
    const [su, sa] = result.compactedEvents;
    expect([su!.messageType, su!.text, su!.isSynthetic()]).to.deep.equal(['user', DEFAULT_SHADOW, true]);
    expect([sa!.messageType, sa!.text, sa!.isSynthetic()]).to.deep.equal(['assistant', SUMMARY, true]);
    expect(RecursiveSummarizationCompactionStrategy.DEFAULT_SUMMARY_SHADOW_PROMPT).to.equal(DEFAULT_SHADOW);
  });

  it('74: the cut snaps forward to a turn start, archiving a whole multi-event turn', async function () {
    const events = [U('u1'), A('a1'), U('u2'), A('a2a'), A('a2b'), U('u3'), A('a3')];
    const result = await strategy(new ScriptedChatClient(), { maxEventsToKeep: 3, overlapSize: 0 }).compact(
      compactionRequest(events),
    );
    expect(texts(result.archivedEvents)).to.deep.equal(['u1', 'a1', 'u2', 'a2a', 'a2b']);
    expect(texts(result.compactedEvents)).to.deep.equal([DEFAULT_SHADOW, SUMMARY, 'u3', 'a3']);
  });

  it('75: compact(null) and a missing chatClient are rejected', async function () {
    await expectRejects(
      strategy(new ScriptedChatClient()).compact(null as unknown as CompactionRequest),
      InvalidArgumentError,
      'request must not be null',
    );
    expectThrows(
      () => new RecursiveSummarizationCompactionStrategy({ chatClient: null as unknown as ChatClient }),
      InvalidArgumentError,
      'chatClient must not be null',
    );
    expectThrows(
      () => new RecursiveSummarizationCompactionStrategy(null as unknown as RecursiveSummarizationCompactionStrategyOptions),
      InvalidArgumentError,
      'chatClient must not be null',
    );
  });

  it('76: a null answer is a no-op that returns the original window', async function () {
    const events = msgs(5);
    const result = await strategy(new ScriptedChatClient([null]), { maxEventsToKeep: 2, overlapSize: 0 }).compact(
      compactionRequest(events),
    );
    expect(result.archivedEvents).to.deep.equal([]);
    expect(result.eventsRemoved).to.equal(0);
    expect(ids(result.compactedEvents)).to.deep.equal(ids(events));
  });

  it('77: a blank answer is a no-op', async function () {
    const result = await strategy(new ScriptedChatClient(['   ']), { maxEventsToKeep: 2, overlapSize: 0 }).compact(
      compactionRequest(msgs(5)),
    );
    expect(result.archivedEvents).to.deep.equal([]);
    expect(result.eventsRemoved).to.equal(0);
  });

  it('78: onSummarizationFailure receives the request on failure and is not called on success', async function () {
    const seen: CompactionRequest[] = [];
    const onSummarizationFailure = (req: CompactionRequest) => void seen.push(req);
    await strategy(new ScriptedChatClient([null]), { maxEventsToKeep: 2, overlapSize: 0, onSummarizationFailure }).compact(
      compactionRequest(msgs(5)),
    );
    expect(seen).to.have.length(1);
    expect(seen[0]!.session.id).to.equal('test-session');
    await strategy(new ScriptedChatClient(), { maxEventsToKeep: 2, overlapSize: 0, onSummarizationFailure }).compact(
      compactionRequest(msgs(5)),
    );
    expect(seen).to.have.length(1);
  });

  it('79: overlapSize must be less than maxEventsToKeep', function () {
    const client = new ScriptedChatClient();
    const e1 = expectThrows(() => strategy(client, { maxEventsToKeep: 5, overlapSize: 5 }), InvalidArgumentError);
    expect(e1.message).to.equal('overlapSize (5) must be less than maxEventsToKeep (5)');
    expectThrows(() => strategy(client, { maxEventsToKeep: 3, overlapSize: 4 }), InvalidArgumentError, 'overlapSize');
    expect(strategy(client, { maxEventsToKeep: 5, overlapSize: 4 }).getOverlapSize()).to.equal(4);
    // The default overlap (2) makes maxEventsToKeep 2 invalid.
    expectThrows(() => strategy(client, { maxEventsToKeep: 2 }), InvalidArgumentError, 'maxEventsToKeep (2)');
  });

  it('79b: other options are validated with the reference messages', function () {
    const client = new ScriptedChatClient();
    expectThrows(() => strategy(client, { maxEventsToKeep: 0 }), InvalidArgumentError, 'maxEventsToKeep must be greater than 0');
    expectThrows(() => strategy(client, { overlapSize: -1 }), InvalidArgumentError, 'overlapSize must be >= 0');
    expectThrows(() => strategy(client, { shadowPrompt: '  ' }), InvalidArgumentError, 'shadowPrompt');
    expectThrows(() => strategy(client, { systemPrompt: '' }), InvalidArgumentError, 'systemPrompt');
    expectThrows(
      () => strategy(client, { failureMode: 'retry' as unknown as 'skip' }),
      InvalidArgumentError,
      'failureMode must be one of skip, stub, throw',
    );
  });

  it('80: tool calls and results are rendered for counting; tokensEstimatedSaved > 0', async function () {
    const estimator = new CharEstimator();
    const events = [U("What's the weather?"), TC(), TR(), U('Thanks'), A("You're welcome")];
    const result = await strategy(new ScriptedChatClient(), {
      maxEventsToKeep: 2,
      overlapSize: 0,
      tokenCountEstimator: estimator,
    }).compact(compactionRequest(events));
    expect(estimator.seen.some((s) => s.includes('get_weather'))).to.equal(true);
    expect(estimator.seen.some((s) => s.includes('Paris'))).to.equal(true);
    expect(estimator.seen.some((s) => s.includes('22C'))).to.equal(true);
    expect(result.tokensEstimatedSaved).to.be.greaterThan(0);
  });

  it('81: a custom eventFormatter is what the estimator sees', async function () {
    const estimator = new CharEstimator();
    const client = new ScriptedChatClient();
    await strategy(client, {
      maxEventsToKeep: 2,
      overlapSize: 0,
      tokenCountEstimator: estimator,
      eventFormatter: (e) => `CUSTOM[${e.messageType}]`,
    }).compact(compactionRequest(msgs(4)));
    expect(estimator.seen.length).to.be.greaterThan(0);
    for (const s of estimator.seen) expect(s.startsWith('CUSTOM[')).to.equal(true, s);
    expect(client.requests[0]!.user).to.include('CUSTOM[user]');
  });

  it('82: the prompt holds prior summary, archived events, overlap and the closing line, in order', async function () {
    const client = new ScriptedChatClient();
    const events = [SU(DEFAULT_SHADOW), SA('Prior summary text'), ...msgs(4)];
    await strategy(client, { maxEventsToKeep: 2, overlapSize: 1 }).compact(compactionRequest(events));
    const prompt = client.requests[0]!.user;
    const parts = [
      '=== PRIOR SUMMARY ===',
      'Prior summary text',
      '=== CONVERSATION TO SUMMARIZE ===',
      'User: msg-1',
      'User: msg-2',
      '=== UPCOMING CONTEXT (do not summarize — for continuity only) ===',
      'User: msg-3',
      'Please write the summary now:',
    ];
    let from = 0;
    for (const part of parts) {
      const at = prompt.indexOf(part, from);
      expect(at, `"${part}" after offset ${from}`).to.be.greaterThanOrEqual(from);
      from = at + part.length;
    }
    const priorBlock = prompt.slice(0, prompt.indexOf('=== CONVERSATION TO SUMMARIZE ==='));
    expect(priorBlock).to.not.include(DEFAULT_SHADOW);
    expect(prompt).to.not.include('User: msg-4');
    expect(client.requests[0]!.system).to.be.a('string').and.not.equal('');
  });

  it('a rejected call counts as a failed summary: no-op, callback, no exception', async function () {
    const failures: string[] = [];
    const events = msgs(5);
    const result = await strategy(new ScriptedChatClient([new Error('connection reset')]), {
      maxEventsToKeep: 2,
      overlapSize: 0,
      onSummarizationFailure: (_req, error) => void failures.push(error.message),
    }).compact(compactionRequest(events));
    expect(result.isNoop()).to.equal(true);
    expect(ids(result.compactedEvents)).to.deep.equal(ids(events));
    expect(failures).to.have.length(1);
    expect(failures[0]).to.include('connection reset');
  });

  it('an empty active window (one long turn) still summarises everything', async function () {
    const client = new ScriptedChatClient();
    const events = [U('start'), A('a'), A('b'), A('c')];
    const result = await strategy(client, { maxEventsToKeep: 2, overlapSize: 0, cutWithinTurn: 'never' }).compact(
      compactionRequest(events),
    );
    expect(client.callCount).to.equal(1);
    expect(result.archivedEvents).to.have.length(4);
    expect(texts(result.compactedEvents)).to.deep.equal([DEFAULT_SHADOW, SUMMARY]);
  });

  it('records the model, the covered range and the creation time in the summary metadata', async function () {
    const now = new Date('2025-01-02T03:04:05.000Z');
    const events = msgs(4);
    const result = await strategy(new ScriptedChatClient([SUMMARY], { model: 'gpt-test' }), {
      maxEventsToKeep: 2,
      overlapSize: 0,
      now: () => now,
    }).compact(compactionRequest(events));
    const meta = result.compactedEvents[1]!.metadata;
    expect(meta).to.include({
      model: 'gpt-test',
      summaryMethod: 'model',
      coveredFirstEventId: events[0]!.id,
      coveredLastEventId: events[1]!.id,
      createdAt: '2025-01-02T03:04:05.000Z',
    });
    expect(result.compactedEvents[1]!.timestamp.getTime()).to.equal(now.getTime());
  });

  it('passes maxSummaryTokens to the summariser as the output cap', async function () {
    const client = new ScriptedChatClient();
    await strategy(client, { maxEventsToKeep: 2, overlapSize: 0, maxSummaryTokens: 321 }).compact(compactionRequest(msgs(4)));
    expect(client.requests[0]!.maxTokens).to.equal(321);
  });
});
