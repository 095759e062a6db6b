import { expect } from 'chai';
import {
  InvalidArgumentError,
  NativeCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  SlidingWindowCompactionStrategy,
  type ChatClient,
  type NativeCompactor,
  type SessionEvent,
} from 'session-compaction';
import {
  METADATA_NATIVE_COMPACTION,
  nativeCompactionPayload,
  nativeCompactionPlan,
  verifyCoverage,
  type NativeCompactionInput,
  type NativeCompactionOutput,
  type PreviewableStrategy,
} from 'session-compaction/spi';
import { CharEstimator, compactionRequest, expectThrows, msgs } from '../../support/fixtures.js';
import { SUMMARY, ScriptedChatClient, silentLogger } from '../../summarization/support.js';

const PROVIDER = 'test-provider';

/** A provider double: answers each call with the next scripted outcome and records what it was asked. */
class ScriptedCompactor implements NativeCompactor {
  readonly provider = PROVIDER;
  readonly model = 'compactor-model';
  readonly inputs: NativeCompactionInput[] = [];
  constructor(private readonly outcomes: Array<NativeCompactionOutput | Error>) {}
  async compact(input: NativeCompactionInput): Promise<NativeCompactionOutput> {
    this.inputs.push(input);
    const outcome = this.outcomes[Math.min(this.inputs.length - 1, this.outcomes.length - 1)]!;
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }
}

const payloadOf = (n: number) => ({ type: 'compaction', encrypted_content: `opaque-${n}-\u00e9\u2028"quoted"` });
const ok = (n = 1, text: string | null = null): NativeCompactionOutput => ({
  payload: [payloadOf(n)],
  text,
  usage: { promptTokens: 100, completionTokens: 10, totalTokens: 110 },
});

function fallback(client: ChatClient = new ScriptedChatClient()) {
  return new RecursiveSummarizationCompactionStrategy({
    chatClient: client,
    maxEventsToKeep: 2,
    overlapSize: 0,
    tokenCountEstimator: new CharEstimator(),
    logger: silentLogger,
  });
}

function strategy(
  compactor: NativeCompactor,
  options: { client?: ChatClient; portableSummary?: 'summarize' | 'provider' | 'mechanical' } = {},
) {
  return new NativeCompactionStrategy({
    compactor,
    fallback: fallback(options.client),
    ...(options.portableSummary ? { portableSummary: options.portableSummary } : {}),
    logger: silentLogger,
  });
}

const summaryOf = (window: readonly SessionEvent[]) => window.find((e) => e.isSynthetic() && e.messageType === 'assistant')!;

describe('NativeCompactionStrategy', function () {
  it('stores the provider payload on the summary pair, tagged with the provider, with the summariser text', async function () {
    const events = msgs(6);
    const compactor = new ScriptedCompactor([ok(1)]);
    const result = await strategy(compactor).compact(compactionRequest(events));
    expect(result.archivedEvents.map((e) => e.id)).to.deep.equal(events.slice(0, 4).map((e) => e.id));
    const summary = summaryOf(result.compactedEvents);
    expect(summary.text).to.equal(SUMMARY);
    expect(nativeCompactionPayload(summary, PROVIDER)).to.deep.equal([payloadOf(1)]);
    expect(nativeCompactionPayload(summary, 'another-provider')).to.equal(undefined);
    expect(summary.metadata.summaryMethod).to.equal('native');
    expect(summary.metadata.portableSummaryMethod).to.equal('model');
    expect((summary.metadata[METADATA_NATIVE_COMPACTION] as { model: string }).model).to.equal('compactor-model');
    const shadow = result.compactedEvents[0]!;
    expect(shadow.messageType).to.equal('user');
    expect(shadow.metadata[METADATA_NATIVE_COMPACTION]).to.deep.equal({ provider: PROVIDER });
  });

  it('sends the provider exactly the range the summary replaces', async function () {
    const events = msgs(6);
    const compactor = new ScriptedCompactor([ok(1)]);
    await strategy(compactor).compact(compactionRequest(events));
    expect(compactor.inputs).to.have.length(1);
    expect(compactor.inputs[0]!.events.map((e) => e.id)).to.deep.equal(events.slice(0, 4).map((e) => e.id));
  });

  it('a second compaction sends the prior native summary with the new range and replaces it', async function () {
    const compactor = new ScriptedCompactor([ok(1), ok(2)]);
    const s = strategy(compactor);
    const first = await s.compact(compactionRequest(msgs(6)));
    const window = [...first.compactedEvents, ...msgs(3, 'next-')];
    const second = await s.compact(compactionRequest(window));
    const sent = compactor.inputs[1]!.events;
    expect(
      sent.slice(0, 2).every((e) => e.isSynthetic()),
      'the prior summary pair is sent first',
    ).to.equal(true);
    expect(nativeCompactionPayload(sent[1]!, PROVIDER)).to.deep.equal([payloadOf(1)]);
    const summaries = second.compactedEvents.filter((e) => e.isSynthetic() && e.messageType === 'assistant');
    expect(summaries).to.have.length(1);
    expect(nativeCompactionPayload(summaries[0]!, PROVIDER)).to.deep.equal([payloadOf(2)]);
  });

  it('the result verifies against the coverage ledger like a summary', async function () {
    const events = msgs(6);
    const result = await strategy(new ScriptedCompactor([ok(1)])).compact(compactionRequest(events));
    const log = [...result.archivedEvents.map((e) => e.asArchived()), ...result.compactedEvents];
    const report = verifyCoverage(log);
    expect(report.ok).to.equal(true);
    expect(report.summarized).to.have.length(4);
  });

  for (const status of [400, 429, 500, 503]) {
    it(`falls back to the library summariser when the provider fails (${status})`, async function () {
      const events = msgs(6);
      const failures: unknown[] = [];
      const compactor = new ScriptedCompactor([Object.assign(new Error(`${status} from provider`), { status })]);
      const s = new NativeCompactionStrategy({
        compactor,
        fallback: fallback(),
        logger: silentLogger,
        onNativeFailure: (_request, error) => failures.push(error),
      });
      const result = await s.compact(compactionRequest(events));
      const summary = summaryOf(result.compactedEvents);
      expect(summary.text).to.equal(SUMMARY);
      expect(summary.metadata[METADATA_NATIVE_COMPACTION]).to.equal(undefined);
      expect(summary.metadata.summaryMethod).to.equal('model');
      expect(result.archivedEvents).to.have.length(4);
      expect(failures).to.have.length(1);
    });
  }

  it('a provider answer without a payload is a failure: the library summary is committed', async function () {
    const result = await strategy(new ScriptedCompactor([{ payload: null, text: null, usage: null }])).compact(
      compactionRequest(msgs(6)),
    );
    const summary = summaryOf(result.compactedEvents);
    expect(summary.text).to.equal(SUMMARY);
    expect(summary.metadata[METADATA_NATIVE_COMPACTION]).to.equal(undefined);
  });

  it("portableSummary 'mechanical' calls no summariser and writes a mechanical text", async function () {
    const client = new ScriptedChatClient();
    const result = await strategy(new ScriptedCompactor([ok(1)]), { client, portableSummary: 'mechanical' }).compact(
      compactionRequest(msgs(6)),
    );
    expect(client.callCount).to.equal(0);
    const summary = summaryOf(result.compactedEvents);
    expect(summary.text).to.include('msg-1');
    expect(summary.metadata.portableSummaryMethod).to.equal('mechanical');
    expect(nativeCompactionPayload(summary, PROVIDER)).to.deep.equal([payloadOf(1)]);
  });

  it("portableSummary 'provider' uses the provider's readable summary when it returns one", async function () {
    const result = await strategy(new ScriptedCompactor([ok(1, 'The provider summary.')]), {
      portableSummary: 'provider',
    }).compact(compactionRequest(msgs(6)));
    const summary = summaryOf(result.compactedEvents);
    expect(summary.text).to.equal('The provider summary.');
    expect(summary.metadata.portableSummaryMethod).to.equal('provider');
  });

  it('keeps the native compaction when the summariser fails, with a text written without a model', async function () {
    const client = new ScriptedChatClient([new Error('summariser down')]);
    const result = await strategy(new ScriptedCompactor([ok(1)]), { client }).compact(compactionRequest(msgs(6)));
    const summary = summaryOf(result.compactedEvents);
    expect(nativeCompactionPayload(summary, PROVIDER)).to.deep.equal([payloadOf(1)]);
    expect(summary.text).to.include('msg-1');
    expect(summary.metadata.portableSummaryMethod).to.equal('mechanical');
    expect(result.archivedEvents).to.have.length(4);
  });

  it("keeps the native compaction when a summariser in 'throw' mode fails", async function () {
    const s = new NativeCompactionStrategy({
      compactor: new ScriptedCompactor([ok(1, 'The provider summary.')]),
      fallback: new RecursiveSummarizationCompactionStrategy({
        chatClient: new ScriptedChatClient([new Error('summariser down')]),
        maxEventsToKeep: 2,
        overlapSize: 0,
        failureMode: 'throw',
        tokenCountEstimator: new CharEstimator(),
        logger: silentLogger,
      }),
      logger: silentLogger,
    });
    const result = await s.compact(compactionRequest(msgs(6)));
    const summary = summaryOf(result.compactedEvents);
    expect(nativeCompactionPayload(summary, PROVIDER)).to.deep.equal([payloadOf(1)]);
    expect(summary.text).to.equal('The provider summary.');
    expect(summary.metadata.portableSummaryMethod).to.equal('provider');
  });

  it('nothing to archive: neither the provider nor the summariser is called', async function () {
    const client = new ScriptedChatClient();
    const compactor = new ScriptedCompactor([ok(1)]);
    const result = await strategy(compactor, { client }).compact(compactionRequest(msgs(2)));
    expect(result.isNoop()).to.equal(true);
    expect(result.skipReason).to.equal('nothing-to-archive');
    expect(compactor.inputs).to.have.length(0);
    expect(client.callCount).to.equal(0);
  });

  it("reports the provider's usage as a summariser call, added to the summariser's", async function () {
    const result = await strategy(new ScriptedCompactor([ok(1)])).compact(compactionRequest(msgs(6)));
    expect(result.usage?.summarizerCalls).to.equal(2);
    expect(result.usage?.summarizerInputTokens).to.equal(100);
    expect(result.usage?.summarizerOutputTokens).to.equal(10);
  });

  it('the converters plan: the payload replaces the pair, the shadow prompt is left out', async function () {
    const result = await strategy(new ScriptedCompactor([ok(1)])).compact(compactionRequest(msgs(6)));
    const plan = nativeCompactionPlan(result.compactedEvents, PROVIDER);
    expect([...plan.entries()].sort(([a], [b]) => a - b)).to.deep.equal([
      [0, null],
      [1, [payloadOf(1)]],
    ]);
    expect(nativeCompactionPlan(result.compactedEvents, 'another-provider').size).to.equal(0);
  });

  it('validates its options', function () {
    const compactor = new ScriptedCompactor([ok(1)]);
    expectThrows(() => new NativeCompactionStrategy(null as never), InvalidArgumentError, 'options must not be null');
    expectThrows(
      () => new NativeCompactionStrategy({ compactor: {} as never, fallback: fallback() }),
      InvalidArgumentError,
      'compactor must have a compact method',
    );
    expectThrows(
      () => new NativeCompactionStrategy({ compactor, fallback: { compact: async () => null as never } as never }),
      InvalidArgumentError,
      'fallback must be a summarising strategy with a preview method',
    );
    expectThrows(
      () => new NativeCompactionStrategy({ compactor, fallback: fallback(), portableSummary: 'other' as never }),
      InvalidArgumentError,
      'portableSummary must be one of summarize, provider, mechanical',
    );
  });

  describe('failures, logs and usage', function () {
    class RecordingLogger {
      readonly warnings: Array<[string, Record<string, unknown> | undefined]> = [];
      error() {}
      info() {}
      debug() {}
      warn(message: string, meta?: Record<string, unknown>) {
        this.warnings.push([message, meta]);
      }
    }

    it('refuses missing options, a missing compactor or provider tag, and a fallback without compact', function () {
      const compactor = new ScriptedCompactor([ok(1)]);
      expectThrows(() => new NativeCompactionStrategy(undefined as never), InvalidArgumentError, 'options must not be null');
      for (const missing of [null, undefined]) {
        expectThrows(
          () => new NativeCompactionStrategy({ compactor: missing as never, fallback: fallback() }),
          InvalidArgumentError,
          'compactor must have a compact method',
        );
        expectThrows(
          () => new NativeCompactionStrategy({ compactor, fallback: missing as never }),
          InvalidArgumentError,
          'fallback must not be null',
        );
      }
      for (const provider of [undefined, '']) {
        expectThrows(
          () =>
            new NativeCompactionStrategy({ compactor: { compact: compactor.compact, provider } as never, fallback: fallback() }),
          InvalidArgumentError,
          'compactor.provider must not be null or empty',
        );
      }
      expectThrows(
        () => new NativeCompactionStrategy({ compactor, fallback: { preview: fallback().preview } as never }),
        InvalidArgumentError,
        'fallback must not be null',
      );
    });

    it('an answer that is not an object, has no payload, or a payload that is not JSON falls back to the library summary', async function () {
      for (const answer of [null, 'compacted', { text: null, usage: null }, { payload: () => 1, text: null, usage: null }]) {
        const result = await strategy(new ScriptedCompactor([answer as never])).compact(compactionRequest(msgs(6)));
        const summary = summaryOf(result.compactedEvents);
        expect(summary.metadata[METADATA_NATIVE_COMPACTION], JSON.stringify(answer)).to.equal(undefined);
        expect(summary.text).to.equal(SUMMARY);
      }
    });

    it('logs a provider failure with the provider and the error, and a listener that throws, then falls back', async function () {
      const logger = new RecordingLogger();
      const s = new NativeCompactionStrategy({
        compactor: new ScriptedCompactor([new Error('503 from provider')]),
        fallback: fallback(),
        logger,
        onNativeFailure: () => {
          throw new Error('listener broke');
        },
      });
      const result = await s.compact(compactionRequest(msgs(6)));
      expect(summaryOf(result.compactedEvents).text).to.equal(SUMMARY);
      expect(logger.warnings).to.deep.equal([
        [
          'native compaction failed; the library summariser compacts instead',
          { sessionId: 'test-session', provider: PROVIDER, error: '503 from provider' },
        ],
        ['onNativeFailure threw; ignored', { error: 'Error: listener broke' }],
      ]);
    });

    it('logs why an answer was refused: no compaction, or a payload that is not JSON', async function () {
      const errorFor = async (answer: unknown) => {
        const logger = new RecordingLogger();
        const s = new NativeCompactionStrategy({
          compactor: new ScriptedCompactor([answer as never]),
          fallback: fallback(),
          logger,
        });
        await s.compact(compactionRequest(msgs(6)));
        return logger.warnings[0]![1]!.error;
      };
      expect(await errorFor(null)).to.equal('the provider returned no compaction');
      expect(await errorFor({ text: null, usage: null })).to.equal('the provider returned no compaction');
      expect(await errorFor({ payload: null, text: null, usage: null })).to.equal('the provider returned no compaction');
      expect(await errorFor({ payload: () => 1, text: null, usage: null })).to.equal('the compaction payload is not JSON');
    });

    it('without a failure listener, a provider failure is logged once', async function () {
      const logger = new RecordingLogger();
      const s = new NativeCompactionStrategy({
        compactor: new ScriptedCompactor([new Error('down')]),
        fallback: fallback(),
        logger,
      });
      await s.compact(compactionRequest(msgs(6)));
      expect(logger.warnings.map(([message]) => message)).to.deep.equal([
        'native compaction failed; the library summariser compacts instead',
      ]);
    });

    it("logs a summariser in 'throw' mode that fails after the native compaction", async function () {
      const logger = new RecordingLogger();
      const s = new NativeCompactionStrategy({
        compactor: new ScriptedCompactor([ok(1)]),
        fallback: new RecursiveSummarizationCompactionStrategy({
          chatClient: new ScriptedChatClient([new Error('summariser down')]),
          maxEventsToKeep: 2,
          overlapSize: 0,
          failureMode: 'throw',
          tokenCountEstimator: new CharEstimator(),
          logger: silentLogger,
        }),
        logger,
      });
      await s.compact(compactionRequest(msgs(6)));
      expect(logger.warnings).to.have.length(1);
      expect(logger.warnings[0]![0]).to.equal(
        'the summariser failed after the native compaction; a text written without a model is stored',
      );
      expect(logger.warnings[0]![1]).to.deep.include({ sessionId: 'test-session' });
      expect(String(logger.warnings[0]![1]!.error)).to.include('summariser down');
    });

    it('previews as its fallback does, without calling the provider or the summariser', async function () {
      const client = new ScriptedChatClient();
      const compactor = new ScriptedCompactor([ok(1)]);
      const request = compactionRequest(msgs(6));
      const preview = await strategy(compactor, { client }).preview(request);
      const expected = await fallback().preview(request);
      expect(preview.result.archivedEvents.map((e) => e.id)).to.deep.equal(expected.result.archivedEvents.map((e) => e.id));
      expect(preview.modelCalled).to.equal(false);
      expect(compactor.inputs).to.have.length(0);
      expect(client.callCount).to.equal(0);
    });

    it("counts the provider's cached prompt tokens, and a call without usage as one call with no tokens", async function () {
      const cached = await strategy(
        new ScriptedCompactor([
          { ...ok(1), usage: { promptTokens: 100, completionTokens: 10, totalTokens: 110, cachedPromptTokens: 30 } },
        ]),
        { portableSummary: 'mechanical' },
      ).compact(compactionRequest(msgs(6)));
      expect(cached.usage).to.deep.include({ summarizerCalls: 1, summarizerInputTokens: 100, summarizerCachedInputTokens: 30 });
      const unmetered = await strategy(new ScriptedCompactor([{ ...ok(1), usage: null }]), {
        portableSummary: 'mechanical',
      }).compact(compactionRequest(msgs(6)));
      expect(unmetered.usage).to.deep.include({ summarizerCalls: 1, summarizerInputTokens: 0, summarizerOutputTokens: 0 });
    });

    it('a fallback that compacts another range than it previewed: its summary stands alone, without the native record', async function () {
      const logger = new RecordingLogger();
      const inner = fallback();
      const drifting: PreviewableStrategy = {
        preview: (r) => inner.preview(r),
        compact: (r) => inner.compact(r.withEvents(r.events.slice(1))),
      };
      const compactor = new ScriptedCompactor([ok(1)]);
      const events = msgs(6);
      const result = await new NativeCompactionStrategy({ compactor, fallback: drifting, logger }).compact(
        compactionRequest(events),
      );
      expect(result.archivedEvents.map((e) => e.id)).to.deep.equal(events.slice(1, 4).map((e) => e.id));
      expect(summaryOf(result.compactedEvents).metadata[METADATA_NATIVE_COMPACTION]).to.equal(undefined);
      expect(result.usage?.summarizerCalls).to.equal(2);
      expect(logger.warnings).to.deep.equal([
        [
          'the fallback compacted another range than it previewed; the native compaction is not stored',
          { sessionId: 'test-session' },
        ],
      ]);
    });

    it('a fallback whose preview writes no summary compacts alone: the provider is not asked', async function () {
      const cut = new SlidingWindowCompactionStrategy({ maxEvents: 2 });
      const cutting: PreviewableStrategy = {
        preview: async (r) => ({ result: await cut.compact(r), modelCalled: false }),
        compact: (r) => cut.compact(r),
      };
      const compactor = new ScriptedCompactor([ok(1)]);
      const events = msgs(6);
      const result = await new NativeCompactionStrategy({ compactor, fallback: cutting, logger: silentLogger }).compact(
        compactionRequest(events),
      );
      expect(compactor.inputs).to.have.length(0);
      expect(result.compactedEvents.map((e) => e.id)).to.deep.equal(events.slice(4).map((e) => e.id));
    });

    it("uses the provider's readable text only with portableSummary 'provider', and only when there is one", async function () {
      const mechanical = await strategy(new ScriptedCompactor([ok(1, 'The provider summary.')]), {
        portableSummary: 'mechanical',
      }).compact(compactionRequest(msgs(6)));
      expect(summaryOf(mechanical.compactedEvents).metadata.portableSummaryMethod).to.equal('mechanical');
      expect(summaryOf(mechanical.compactedEvents).text).to.include('msg-1');
      const textless = await strategy(new ScriptedCompactor([ok(1, null)]), { portableSummary: 'provider' }).compact(
        compactionRequest(msgs(6)),
      );
      expect(summaryOf(textless.compactedEvents).metadata.portableSummaryMethod).to.equal('mechanical');
      expect(summaryOf(textless.compactedEvents).text).to.include('msg-1');
    });
  });
});
