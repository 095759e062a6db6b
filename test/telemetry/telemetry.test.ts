import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { expect } from 'chai';
import {
  AdditiveSummarizationCompactionStrategy,
  DefaultSessionService,
  InMemorySessionRepository,
  Messages,
  SessionEvent,
  SlidingWindowCompactionStrategy,
  TurnCountTrigger,
  type ChatClient,
  type CompactionRequest,
  Bm25Retriever,
  ContextAssembler,
  RepositoryRetriever,
} from 'session-compaction';
import { instrumentRetriever } from 'session-compaction/spi';
import {
  configureTelemetry,
  TELEMETRY_ATTRIBUTES as ATTR,
  TELEMETRY_METRICS as METRIC,
  TELEMETRY_SPANS as SPAN,
} from 'session-compaction/telemetry';
import { CHAT_MODEL, echoReplies, harness, silent } from '../chat/support/harness.js';
import { installOtel, type OtelCapture } from '../support/otel.js';

/** Every message of these tests carries it: it must never show up on a span unless content capture is on. */
const SECRET = 'zebra-7431-private';
const always = () => true;

async function conversation(service: DefaultSessionService, turns: number, userId = 'u') {
  const session = await service.create({ userId });
  for (let i = 0; i < turns; i++) {
    await service.appendMessage(session.id, Messages.user(`question ${i} ${SECRET}`));
    await service.appendMessage(session.id, Messages.assistant(`answer ${i} ${SECRET}`));
  }
  return session.id;
}

function attributesJson(otel: OtelCapture): string {
  return JSON.stringify(otel.spans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events })));
}

const sum = (otel: OtelCapture, metric: string, match: Record<string, unknown> = {}) =>
  otel
    .points(metric)
    .filter((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v))
    .reduce((n, p) => n + (typeof p.value === 'number' ? p.value : ((p.value as { count?: number }).count ?? 0)), 0);

describe('telemetry (OpenTelemetry SDK with in-memory exporters)', function () {
  let otel: OtelCapture;
  before(() => (otel = installOtel()));
  after(async () => otel.shutdown());
  beforeEach(() => otel.reset());
  afterEach(() => configureTelemetry({ captureContent: false, enabled: true }));

  it('a compaction that commits: the compact span carries trigger, strategy, sizes, archived count and CAS outcome; repository spans nest under it', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const id = await conversation(service, 6);
    otel.reset();
    const result = await service.compact(id, new TurnCountTrigger(2), new SlidingWindowCompactionStrategy({ maxEvents: 4 }));
    const [span] = otel.spansNamed(SPAN.COMPACT);
    expect(span).to.not.equal(undefined);
    expect(span!.attributes).to.include({
      [ATTR.CONVERSATION_ID]: id,
      [ATTR.STRATEGY]: 'SlidingWindowCompactionStrategy',
      [ATTR.TRIGGER_FIRED]: true,
      [ATTR.OUTCOME]: 'committed',
      [ATTR.CAS_OUTCOME]: 'committed',
      [ATTR.EVENTS_BEFORE]: 12,
      [ATTR.EVENTS_AFTER]: result.compactedEvents.length,
      [ATTR.ARCHIVED_COUNT]: result.archivedEvents.length,
      [ATTR.TOKENS_SAVED]: result.tokensEstimatedSaved,
    });
    expect(span!.attributes[ATTR.TOKENS_AFTER]).to.be.lessThan(span!.attributes[ATTR.TOKENS_BEFORE] as number);
    const commit = otel.spansNamed('repository.compactEvents')[0]!;
    expect(commit.attributes).to.include({
      [ATTR.DB_SYSTEM_NAME]: 'memory',
      [ATTR.DB_OPERATION_NAME]: 'compactEvents',
      [ATTR.CONVERSATION_ID]: id,
    });
    expect(commit.parentSpanContext?.spanId).to.equal(span!.spanContext().spanId);
    expect(commit.instrumentationScope.name).to.equal('session-compaction');

    await otel.collect();
    expect(sum(otel, METRIC.COMPACTIONS, { [ATTR.OUTCOME]: 'committed' })).to.equal(1);
    expect(sum(otel, METRIC.TOKENS_SAVED)).to.equal(result.tokensEstimatedSaved);
    expect(sum(otel, METRIC.DB_OPERATION_DURATION, { [ATTR.DB_OPERATION_NAME]: 'compactEvents' })).to.be.at.least(1);
  });

  it('a compaction that loses CAS: outcome lost, a CAS-conflict count, nothing archived', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const id = await conversation(service, 4);
    otel.reset();
    const inner = new SlidingWindowCompactionStrategy({ maxEvents: 2 });
    // Another writer appends while the strategy runs: the version read before no longer matches.
    const racing = async (request: CompactionRequest) => {
      await service.appendMessage(id, Messages.user('late'));
      return inner.compact(request);
    };
    const result = await service.compact(id, always, racing);
    expect(result.archivedEvents).to.have.length(0);
    const span = otel.spansNamed(SPAN.COMPACT)[0]!;
    expect(span.attributes).to.include({ [ATTR.OUTCOME]: 'lost', [ATTR.CAS_OUTCOME]: 'lost', [ATTR.STRATEGY]: 'racing' });
    await otel.collect();
    expect(sum(otel, METRIC.CAS_CONFLICTS)).to.equal(1);
    expect(sum(otel, METRIC.COMPACTIONS, { [ATTR.OUTCOME]: 'lost' })).to.equal(1);
  });

  it('a lost CAS that is rebased over the concurrent append reports outcome rebased', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent, conflictPolicy: 'rebase' });
    const id = await conversation(service, 4);
    otel.reset();
    const inner = new SlidingWindowCompactionStrategy({ maxEvents: 2 });
    let raced = false;
    const racing = async (request: CompactionRequest) => {
      if (!raced) await service.appendMessage(id, Messages.user('late'));
      raced = true;
      return inner.compact(request);
    };
    await service.compact(id, always, racing);
    expect(otel.spansNamed(SPAN.COMPACT)[0]!.attributes).to.include({ [ATTR.OUTCOME]: 'rebased', [ATTR.CAS_OUTCOME]: 'rebased' });
  });

  it('a summariser that fails: a failed chat span (kind, mode, error.type) under the compact span, a failure count, and no content', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const id = await conversation(service, 6);
    otel.reset();
    const broken: ChatClient = { model: 'summary-model', call: async () => Promise.reject(new Error(`upstream 503 ${SECRET}`)) };
    const strategy = new AdditiveSummarizationCompactionStrategy({
      chatClient: broken,
      keepTurns: 2,
      maxSummaryTokens: 500,
      logger: silent,
    });
    const result = await service.compact(id, always, strategy);
    expect(result.archivedEvents).to.have.length(0);
    const chat = otel.spansNamed('chat summary-model')[0]!;
    expect(chat.kind).to.equal(SpanKind.CLIENT);
    expect(chat.status.code).to.equal(SpanStatusCode.ERROR);
    expect(chat.attributes).to.include({
      [ATTR.OPERATION_NAME]: 'chat',
      [ATTR.REQUEST_MODEL]: 'summary-model',
      [ATTR.SUMMARY_OUTCOME]: 'failed',
      [ATTR.FAILURE_KIND]: 'connection',
      [ATTR.FAILURE_MODE]: 'skip',
      [ATTR.ERROR_TYPE]: 'connection',
      [ATTR.OUTPUT_TOKENS_ESTIMATED]: 0,
    });
    expect(chat.attributes[ATTR.INPUT_TOKENS_ESTIMATED]).to.be.greaterThan(0);
    expect(chat.attributes[ATTR.USAGE_INPUT_TOKENS], 'no guessed gen_ai usage').to.equal(undefined);
    const compact = otel.spansNamed(SPAN.COMPACT)[0]!;
    expect(chat.parentSpanContext?.spanId).to.equal(compact.spanContext().spanId);
    expect(compact.attributes).to.include({ [ATTR.OUTCOME]: 'nothing-to-archive' });
    expect(attributesJson(otel)).to.not.include(SECRET);
    await otel.collect();
    expect(sum(otel, METRIC.SUMMARIZER_FAILURES, { [ATTR.FAILURE_KIND]: 'connection', [ATTR.FAILURE_MODE]: 'skip' })).to.equal(1);
    expect(sum(otel, METRIC.GEN_AI_OPERATION_DURATION, { [ATTR.ERROR_TYPE]: 'connection' })).to.equal(1);
  });

  it('a summariser that succeeds: reported token usage and latency are measured; content only with capture enabled', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const ok: ChatClient = {
      model: 'summary-model',
      call: async () => `a short summary`,
      complete: async () => ({ text: 'a short summary', usage: { promptTokens: 321, completionTokens: 12, totalTokens: 333 } }),
    };
    const strategy = new AdditiveSummarizationCompactionStrategy({
      chatClient: ok,
      keepTurns: 2,
      maxSummaryTokens: 500,
      logger: silent,
    });
    const first = await conversation(service, 6);
    otel.reset();
    await service.compact(first, always, strategy);
    expect(otel.spansNamed('chat summary-model')[0]!.attributes).to.include({
      [ATTR.SUMMARY_OUTCOME]: 'ok',
      [ATTR.USAGE_INPUT_TOKENS]: 321,
      [ATTR.USAGE_OUTPUT_TOKENS]: 12,
    });
    expect(attributesJson(otel)).to.not.include(SECRET);

    configureTelemetry({ captureContent: true });
    const second = await conversation(service, 6);
    otel.reset();
    await service.compact(second, always, strategy);
    const chat = otel.spansNamed('chat summary-model')[0]!;
    expect(chat.attributes[ATTR.INPUT_MESSAGES]).to.be.a('string').and.include(SECRET);
    expect(chat.attributes[ATTR.OUTPUT_MESSAGES]).to.include('a short summary');
    await otel.collect();
    const output = otel.points(METRIC.GEN_AI_TOKEN_USAGE).find((p) => p.attributes[ATTR.TOKEN_TYPE] === 'output');
    expect(output?.value).to.deep.include({ count: 2, sum: 24 });
  });

  it('a SessionMemory turn: a turn span with model, context pressure and prompt size; compaction, repository and summariser spans nest under it', async function () {
    const summarizer: ChatClient = { model: 'summary-model', call: async () => 'summary of earlier turns' };
    const h = await harness({
      contextWindowTokens: 4000,
      compactionTrigger: new TurnCountTrigger(2),
      compactionStrategy: new AdditiveSummarizationCompactionStrategy({
        chatClient: summarizer,
        keepTurns: 1,
        maxSummaryTokens: 500,
        logger: silent,
      }),
    });
    try {
      echoReplies(h.server);
      for (let i = 0; i < 3; i++) {
        otel.reset();
        await h.memory.call({ sessionId: 'turns', messages: [{ role: 'user', content: `hello ${i} ${SECRET}` }] });
      }
      const turn = otel.spansNamed(SPAN.TURN)[0]!;
      expect(turn.attributes).to.include({
        [ATTR.CONVERSATION_ID]: 'turns',
        [ATTR.REQUEST_MODEL]: CHAT_MODEL,
        [ATTR.STREAMING]: false,
        [ATTR.CONTEXT_WINDOW_TOKENS]: 4000,
        [ATTR.PERSISTED_COUNT]: 2,
      });
      const pressure = turn.attributes[ATTR.CONTEXT_PRESSURE] as number;
      expect(pressure).to.be.greaterThan(0).and.lessThan(1);
      expect(pressure).to.equal((turn.attributes[ATTR.PROMPT_TOKENS_ESTIMATED] as number) / 4000);
      const compact = otel.spansNamed(SPAN.COMPACT)[0]!;
      expect(compact.parentSpanContext?.spanId).to.equal(turn.spanContext().spanId);
      expect(compact.attributes[ATTR.OUTCOME]).to.equal('committed');
      expect(turn.attributes[ATTR.ARCHIVED_COUNT]).to.equal(compact.attributes[ATTR.ARCHIVED_COUNT]);
      const chat = otel.spansNamed('chat summary-model')[0]!;
      expect(chat.parentSpanContext?.spanId).to.equal(compact.spanContext().spanId);
      const append = otel.spansNamed('repository.appendEvent')[0]!;
      expect(append.parentSpanContext?.spanId).to.equal(turn.spanContext().spanId);
      expect(attributesJson(otel)).to.not.include(SECRET);
      await otel.collect();
      expect(sum(otel, METRIC.CONTEXT_PRESSURE)).to.be.at.least(3);
    } finally {
      await h.close();
    }
  });

  it('retrieval through instrumentRetriever: a span with retriever, scope, limit and hits; the query only with capture', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const id = await conversation(service, 6);
    await service.compact(id, always, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
    const retriever = instrumentRetriever(new Bm25Retriever({ sessionService: service }));
    otel.reset();
    const hits = await retriever.retrieve({ sessionId: id, query: `question ${SECRET}`, limit: 3 });
    const span = otel.spansNamed(SPAN.RETRIEVE)[0]!;
    expect(span.attributes).to.include({
      [ATTR.RETRIEVER]: 'Bm25Retriever',
      [ATTR.RETRIEVAL_SCOPE]: 'session',
      [ATTR.RETRIEVAL_LIMIT]: 3,
      [ATTR.RETRIEVAL_HITS]: hits.length,
      [ATTR.CONVERSATION_ID]: id,
    });
    expect(hits.length).to.be.greaterThan(0);
    expect(attributesJson(otel)).to.not.include(SECRET);
    configureTelemetry({ captureContent: true });
    otel.reset();
    await retriever.retrieve({ sessionId: id, query: `question ${SECRET}` });
    expect(otel.spansNamed(SPAN.RETRIEVE)[0]!.attributes[ATTR.RETRIEVAL_QUERY]).to.include(SECRET);
    await otel.collect();
    expect(sum(otel, METRIC.RETRIEVAL_DURATION, { [ATTR.RETRIEVER]: 'Bm25Retriever' })).to.equal(2);
  });

  it('ContextAssembler reports its retrieval as a retrieve span; wrapping a retriever twice records one span', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const id = await conversation(service, 6);
    await service.compact(id, always, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
    const retriever = instrumentRetriever(instrumentRetriever(new Bm25Retriever({ sessionService: service })));
    const assembler = new ContextAssembler({ sessionService: service, retriever });
    otel.reset();
    // Without neighbours every recalled event is a hit of the retrieval.
    const context = await assembler.assemble({ sessionId: id, maxTokens: 2000, query: 'question 1', recall: { neighbors: 0 } });
    const spans = otel.spansNamed(SPAN.RETRIEVE);
    expect(spans).to.have.length(1);
    expect(spans[0]!.attributes[ATTR.RETRIEVAL_HITS]).to.be.at.least(context.recalled.length);
  });

  it('a retrieval that reads the neighbourhoods too (retrieveWithNeighbours) is one retrieve span with its hits', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const id = await conversation(service, 6);
    await service.compact(id, always, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
    const retriever = instrumentRetriever(
      new RepositoryRetriever({
        repository: new InMemorySessionRepository(),
        fallback: new Bm25Retriever({ sessionService: service }),
      }),
    );
    otel.reset();
    const { hits } = await retriever.retrieveWithNeighbours!({ sessionId: id, query: 'question 1', limit: 3 }, 1);
    const spans = otel.spansNamed(SPAN.RETRIEVE);
    expect(spans).to.have.length(1);
    expect(hits.length).to.be.greaterThan(0);
    expect(spans[0]!.attributes).to.include({ [ATTR.RETRIEVER]: 'RepositoryRetriever', [ATTR.RETRIEVAL_HITS]: hits.length });
  });

  it('a repository failure marks its span failed with the error type', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    otel.reset();
    let error: unknown;
    await service
      .appendEvent(SessionEvent.create({ sessionId: 'missing', message: Messages.user('x') }))
      .catch((e: unknown) => (error = e));
    expect(error).to.be.instanceOf(Error);
    const span = otel.spansNamed('repository.appendEvent')[0]!;
    expect(span.status.code).to.equal(SpanStatusCode.ERROR);
    expect(span.attributes[ATTR.ERROR_TYPE]).to.equal('InvalidArgumentError');
  });

  it('with telemetry disabled nothing is recorded and compaction behaves the same', async function () {
    configureTelemetry({ enabled: false });
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const id = await conversation(service, 6);
    otel.reset();
    const result = await service.compact(id, new TurnCountTrigger(2), new SlidingWindowCompactionStrategy({ maxEvents: 4 }));
    expect(result.archivedEvents.length).to.be.greaterThan(0);
    expect(otel.spans()).to.deep.equal([]);
  });
});
