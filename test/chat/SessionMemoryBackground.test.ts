import { expect } from 'chai';
import {
  EventFilter,
  OpenAIChatClient,
  RecursiveSummarizationCompactionStrategy,
  TokenCountTrigger,
  TurnCountTrigger,
  type CompactionTrigger,
} from 'session-compaction';
import type { OpenAISessionMemoryOptions } from 'session-compaction/openai';
import { CHAT_MODEL, harness, silent, type Harness } from './support/harness.js';

const SUMMARY_MODEL = 'summary-model';

/** A gate the fake summariser waits behind, so a test decides when the summary arrives. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

describe('SessionMemory: compaction off the hot path, escalation and the circuit breaker', function () {
  let h: Harness;
  let summaryGate = gate();
  let summaryFails = false;
  const user = (text: string) => ({ role: 'user' as const, content: text });
  const summaries = () => h.server.requests.filter((r) => r.model === SUMMARY_MODEL).length;
  const errors: string[] = [];
  const logger = { ...silent, error: (message: string) => errors.push(message) };

  beforeEach(async function () {
    summaryGate = gate();
    summaryFails = false;
    errors.length = 0;
    h = await harness();
    h.server.respondWith(async (body) => {
      if (body.model === SUMMARY_MODEL) {
        await summaryGate.wait;
        return summaryFails ? { status: 500 } : { content: 'SUMMARY: earlier questions about the pipeline.' };
      }
      return { content: `answer to ${String(body.messages!.at(-1)!.content).slice(0, 20)}` };
    });
  });
  afterEach(async function () {
    summaryGate.open();
    await h.close();
  });

  /** Polls until `condition` holds (at most 2 s): for what a background run does in its own time. */
  async function eventually(condition: () => boolean): Promise<void> {
    for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  /** The questions each summariser request was asked to summarise (its "conversation to summarize" part). */
  const summarisedQuestions = () =>
    h.server.requests
      .filter((r) => r.model === SUMMARY_MODEL)
      .map((r) => {
        const prompt = String(r.messages!.at(-1)!.content);
        const part = prompt
          .split('=== CONVERSATION TO SUMMARIZE ===')[1]!
          .split(/=== UPCOMING CONTEXT|Please write the summary now:/)[0]!;
        return part.match(/User: q\d/g) ?? [];
      });
  const summarizer = (failureMode: 'skip' | 'throw' = 'skip', maxEventsToKeep = 2) =>
    new RecursiveSummarizationCompactionStrategy({
      chatClient: new OpenAIChatClient({ client: h.client, model: SUMMARY_MODEL, maxRetries: 0, logger: silent }),
      maxEventsToKeep,
      overlapSize: 1,
      failureMode,
      logger: silent,
    });
  const memoryWith = (options: Partial<OpenAISessionMemoryOptions>) =>
    h.memoryWith({ compactionTrigger: new TurnCountTrigger(2), compactionStrategy: summarizer(), logger, ...options });

  it('background: the reply returns before the summariser answers, and the next turn starts from the summary', async function () {
    const memory = memoryWith({ compaction: { mode: 'background' } });
    await memory.call({ sessionId: 'b1', messages: [user('q1')] });
    await memory.call({ sessionId: 'b1', messages: [user('q2')] });
    // The trigger fires after this reply; the summariser is held back, yet the turn completes.
    const third = await memory.call({ sessionId: 'b1', messages: [user('q3')] });
    expect(third.message.content).to.equal('answer to q3');
    expect(third.compaction).to.equal(undefined);
    await eventually(() => summaries() === 1);
    expect(summaries()).to.equal(1);
    expect((await h.service.getEvents('b1')).some((e) => e.isSynthetic())).to.equal(false);

    summaryGate.open();
    await memory.waitForBackgroundCompactions('b1');
    const fourth = await memory.call({ sessionId: 'b1', messages: [user('q4')] });
    expect(fourth.contextStatus).to.equal('summarized');
    expect(JSON.stringify(h.chatRequests().at(-1)!.messages)).to.include('SUMMARY: earlier questions');
  });

  it('a summary finished after later turns appended is committed on top of them, and paid for once', async function () {
    const memory = memoryWith({ compaction: { mode: 'background' } });
    const skipped: string[] = [];
    h.service.events.on('compactionSkipped', (e) => skipped.push(e.reason));
    for (const q of ['q1', 'q2', 'q3']) await memory.call({ sessionId: 'b2', messages: [user(q)] });
    // Two more turns while the summariser is still working: the compaction's version is stale.
    await memory.call({ sessionId: 'b2', messages: [user('q4')] });
    await memory.call({ sessionId: 'b2', messages: [user('q5')] });
    summaryGate.open();
    await memory.waitForBackgroundCompactions();

    const window = await h.service.getEvents('b2', EventFilter.active());
    expect(window.some((e) => e.isSynthetic())).to.equal(true);
    expect(window.map((e) => e.text)).to.include.members(['q5', 'answer to q5']);
    // The first summary was committed over the two turns appended meanwhile (not thrown away for a lost
    // version race); the runs q4 and q5 asked for were coalesced into one, which summarised only what had
    // come since: no question was summarised twice.
    expect(skipped, 'the first commit lost its version race to the appends').to.include('cas-conflict');
    const asked = summarisedQuestions();
    expect(asked[0]).to.include.members(['User: q1']);
    expect(asked.flat()).to.have.length(new Set(asked.flat()).size);
    expect(summaries()).to.be.at.most(2);
    expect((await h.service.verifyCoverage('b2')).ok).to.equal(true);
  });

  it('a turn waits for the background summariser only when its prompt would not fit the window otherwise', async function () {
    // Our estimate against the window, uncalibrated: turn 3 fits (about 160), turn 4 does not (about 220).
    const memory = memoryWith({ compaction: { mode: 'background' }, contextWindowTokens: 200, calibrate: false });
    const long = (i: number) => `q${i} ${'about the deployment pipeline and its stages '.repeat(6)}`;
    for (let i = 1; i <= 3; i++) await memory.call({ sessionId: 'b3', messages: [user(long(i))] });
    // The summary of turns 1–2 is in flight (held back); turn 4 would not fit without it.
    await eventually(() => summaries() === 1);
    const chatBefore = h.chatRequests().length;
    let done = false;
    const waiting = memory.call({ sessionId: 'b3', messages: [user(long(4))] }).finally(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(done, 'the over-window turn waits for the summary in flight').to.equal(false);
    expect(h.chatRequests().length).to.equal(chatBefore);
    summaryGate.open();
    const response = await waiting;
    expect(response.contextStatus).to.equal('summarized');
    expect(summaries()).to.equal(1);
  });

  it('a failed background run is logged and loses nothing', async function () {
    summaryFails = true;
    summaryGate.open();
    const memory = memoryWith({ compaction: { mode: 'background', fallback: false }, compactionStrategy: summarizer('throw') });
    for (const q of ['q1', 'q2', 'q3']) await memory.call({ sessionId: 'b4', messages: [user(q)] });
    await memory.waitForBackgroundCompactions();
    expect(errors).to.include('a background compaction failed; the log is unchanged and the next turn retries');
    expect((await h.service.getEvents('b4', EventFilter.all())).map((e) => e.text)).to.deep.equal([
      'q1',
      'answer to q1',
      'q2',
      'answer to q2',
      'q3',
      'answer to q3',
    ]);
  });

  it('a compaction that cannot reach the trigger escalates to the mechanical fallback instead of running again next turn', async function () {
    summaryGate.open();
    // Five events kept after the summary is still over the trigger: the summariser alone never gets there.
    const trigger = new TokenCountTrigger({ threshold: 70 });
    const memory = memoryWith({ compactionTrigger: trigger, compactionStrategy: summarizer('skip', 4) });
    const long = (i: number) => `q${i} ${'stage '.repeat(20)}`;
    await memory.call({ sessionId: 'e1', messages: [user(long(1))] });
    await memory.call({ sessionId: 'e1', messages: [user(long(2))] });
    const escalated = await memory.call({ sessionId: 'e1', messages: [user(long(3))] });
    expect(escalated.compaction).to.not.equal(undefined);
    const window = await h.service.getEvents('e1', EventFilter.active());
    expect(await trigger.shouldCompact({ session: (await h.service.findById('e1'))!, events: window } as never)).to.equal(false);

    const withoutFallback = memoryWith({
      compactionTrigger: trigger,
      compactionStrategy: summarizer('skip', 4),
      compaction: { fallback: false },
    });
    await withoutFallback.call({ sessionId: 'e2', messages: [user(long(1))] });
    await withoutFallback.call({ sessionId: 'e2', messages: [user(long(2))] });
    await withoutFallback.call({ sessionId: 'e2', messages: [user(long(3))] });
    const stillOver = await h.service.getEvents('e2', EventFilter.active());
    expect(await trigger.shouldCompact({ session: (await h.service.findById('e2'))!, events: stillOver } as never)).to.equal(
      true,
    );
  });

  it('the circuit breaker stops calling a summariser that keeps failing; the fallback keeps the window in bounds', async function () {
    summaryFails = true;
    summaryGate.open();
    const alwaysOver: CompactionTrigger = { shouldCompact: (r) => r.currentTurnCount > 1 };
    const memory = memoryWith({ compactionTrigger: alwaysOver, compaction: { breaker: { failures: 2, cooldownMs: 60_000 } } });
    for (let i = 1; i <= 6; i++) await memory.call({ sessionId: 'cb', messages: [user(`q${i}`)] });
    // Turns 2 and 3 tried the summariser and failed; the breaker opened; turns 4–6 did not call it.
    expect(summaries()).to.equal(2);
    const window = await h.service.getEvents('cb', EventFilter.active());
    expect(window.filter((e) => e.messageType === 'user').length).to.be.at.most(1);
    expect(h.chatRequests().every((r) => r.model === CHAT_MODEL)).to.equal(true);
  });
});
