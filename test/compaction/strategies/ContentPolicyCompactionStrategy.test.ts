import { expect } from 'chai';
import {
  ContentPolicyCompactionStrategy,
  DefaultSessionService,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  createDefaultLogger,
  type AssistantMessage,
  type SessionEvent,
} from 'session-compaction';
import { METADATA_MASKED_FROM, defaultToolStatus } from 'session-compaction/spi';
import { A, CharEstimator, U, compactionRequest, event, expectThrows } from '../../support/fixtures.js';
import { call, data, long, result, toolPairsIntact } from '../../support/beyondEvents.js';

// Reasoning is stripped only when it is counted (sent back): these scenarios count it.
const policy = (options: ConstructorParameters<typeof ContentPolicyCompactionStrategy>[0] = {}) =>
  new ContentPolicyCompactionStrategy({ tokenCountEstimator: new CharEstimator({ countReasoning: true }), ...options });
const asAssistant = (e: SessionEvent) => e.message as AssistantMessage;
const thinking = (text: string, reasoning: string) => event(Messages.assistant(text, { reasoning }));

/** Two turns: the first has reasoning and a tool pair, the second (protected by default) the same. */
function twoTurns() {
  return [
    U('first'),
    call('c1', 'read_file', '{"path":"src/a.ts"}', null, long('think-1', 500)),
    result('c1', long('file a'), 'read_file'),
    thinking('Read a.', long('think-2', 500)),
    U('second'),
    call('c2', 'read_file', '{"path":"src/b.ts"}', null, long('think-3', 500)),
    result('c2', long('file b'), 'read_file'),
    A('Read b.'),
  ];
}

describe('ContentPolicyCompactionStrategy', function () {
  it('by default strips reasoning and tool outputs outside the last turn, keeping call names, ids and arguments', async function () {
    const events = twoTurns();
    const r = await policy().compact(compactionRequest(events));
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([events[1]!.id, events[2]!.id, events[3]!.id]);
    const [, c1, r1, a1] = r.compactedEvents;
    expect(asAssistant(c1!).reasoning).to.equal(undefined);
    expect(asAssistant(c1!).toolCalls![0]).to.include({ id: 'c1', name: 'read_file', arguments: '{"path":"src/a.ts"}' });
    expect(data(r1!)).to.equal('[compacted] read_file (call c1): success');
    expect(asAssistant(a1!)).to.include({ text: 'Read a.' });
    expect(asAssistant(a1!).reasoning).to.equal(undefined);
    expect(r.compactedEvents.slice(4)).to.deep.equal(events.slice(4));
    for (const e of r.compactedEvents.slice(1, 4)) expect(e.metadata[METADATA_MASKED_FROM]).to.be.a('string');
  });

  it("strips arguments to a valid JSON marker with toolCalls.request 'strip' (only when that is shorter)", async function () {
    const args = JSON.stringify({ path: 'src/a.ts', content: 'y'.repeat(500) });
    const events = [
      U('t1'),
      call('c1', 'write_file', args),
      result('c1', 'ok', 'write_file'),
      call('c0', 'ls', '{}'),
      result('c0', 'a'),
      A('done'),
      U('t2'),
    ];
    const r = await policy({ toolCalls: { request: 'strip', response: 'keep' } }).compact(compactionRequest(events));
    const c = asAssistant(r.compactedEvents[1]!).toolCalls![0]!;
    expect(c).to.include({ id: 'c1', name: 'write_file' });
    expect(JSON.parse(c.arguments)).to.deep.equal({ compacted: `${args.length} characters of arguments stripped` });
    expect(r.compactedEvents[2]).to.equal(events[2]);
    expect(r.compactedEvents[3]).to.equal(events[3]);
  });

  it('applies per-tool hints over the defaults, field by field', async function () {
    const events = [
      U('t1'),
      call('w1', 'write_file', JSON.stringify({ path: 'a.ts', content: long('code') })),
      result('w1', long('written'), 'write_file'),
      call('r1', 'read_file', '{"path":"a.ts"}'),
      result('r1', long('contents'), 'read_file'),
      A('done'),
      U('t2'),
    ];
    const r = await policy({
      toolCalls: { request: 'keep', response: 'strip' },
      perTool: { write_file: { request: 'strip', response: 'keep' } },
    }).compact(compactionRequest(events));
    expect(asAssistant(r.compactedEvents[1]!).toolCalls![0]!.arguments).to.contain('compacted');
    expect(data(r.compactedEvents[2]!)).to.equal(long('written'));
    expect(asAssistant(r.compactedEvents[3]!).toolCalls![0]!.arguments).to.equal('{"path":"a.ts"}');
    expect(data(r.compactedEvents[4]!)).to.equal('[compacted] read_file (call r1): success');
  });

  it('keeps the error status of a failed call in the marker (heuristic or custom)', async function () {
    const events = [
      U('t1'),
      call('e1'),
      result('e1', '<returncode>2</returncode>\n<output>' + long('boom') + '</output>'),
      call('e2', 'get_user'),
      result('e2', 'Error: user not found ' + long('x'), 'get_user'),
      A('both failed'),
      U('t2'),
    ];
    const r = await policy().compact(compactionRequest(events));
    expect(data(r.compactedEvents[2]!)).to.equal('[compacted] bash (call e1): error');
    expect(data(r.compactedEvents[4]!)).to.equal('[compacted] get_user (call e2): error');
    const custom = await policy({ toolStatus: () => 'success' }).compact(compactionRequest(events));
    expect(data(custom.compactedEvents[2]!)).to.equal('[compacted] bash (call e1): success');
    expect(defaultToolStatus(Messages.toolResponse('x', 'y', '<returncode>0</returncode>ok'))).to.equal('success');
    expect(defaultToolStatus(Messages.toolResponse('x', 'y', '{"error": "nope"}'))).to.equal('error');
  });

  it('with keepLast { steps } works inside one long agent turn, sparing the last steps', async function () {
    const events = [
      U('fix the bug'),
      call('c1'),
      result('c1', long('a')),
      call('c2'),
      result('c2', long('b')),
      call('c3'),
      result('c3', long('c')),
    ];
    const byTurns = await policy().compact(compactionRequest(events));
    const bySteps = await policy({ keepLast: { steps: 2 } }).compact(compactionRequest(events));
    expect(byTurns.isNoop()).to.equal(true);
    expect(bySteps.archivedEvents.map((e) => e.id)).to.deep.equal([events[2]!.id]);
  });

  it('never strips an unconsumed tool result, even with nothing protected', async function () {
    const events = [U('go'), call('c1'), result('c1', long('a')), A('ok'), call('c2'), result('c2', long('b'))];
    const r = await policy({ keepLast: { turns: 0 } }).compact(compactionRequest(events));
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([events[2]!.id]);
    expect(r.compactedEvents[5]).to.equal(events[5]);
  });

  it("keeps reasoning with reasoning 'keep'", async function () {
    const events = twoTurns();
    const r = await policy({ reasoning: 'keep', toolCalls: { response: 'keep' } }).compact(compactionRequest(events));
    expect(r.isNoop()).to.equal(true);
  });

  it('rejects invalid options with clear messages', function () {
    expectThrows(() => policy({ reasoning: 'drop' as never }), InvalidArgumentError, "reasoning must be 'keep' or 'strip'");
    expectThrows(() => policy({ toolCalls: { request: 'x' as never } }), InvalidArgumentError, 'toolCalls.request');
    expectThrows(() => policy({ perTool: { bash: { response: 'x' as never } } }), InvalidArgumentError, 'perTool.bash.response');
    expectThrows(
      () => policy({ keepLast: { turns: -1 } }),
      InvalidArgumentError,
      'keepLast.turns must be a non-negative integer',
    );
    expectThrows(() => policy({ keepLast: {} as never }), InvalidArgumentError, 'keepLast must be');
    expectThrows(
      () => policy({ keepLast: { turns: 1.5 } }),
      InvalidArgumentError,
      'keepLast.turns must be a non-negative integer',
    );
    expectThrows(
      () => policy({ keepLast: { steps: -1 } }),
      InvalidArgumentError,
      'keepLast.steps must be a non-negative integer',
    );
    expectThrows(
      () => policy({ toolCalls: { response: 'x' as never } }),
      InvalidArgumentError,
      "toolCalls.response must be 'keep', 'strip' or 'omit'",
    );
    expectThrows(
      () => policy({ perTool: { bash: { request: 'x' as never } } }),
      InvalidArgumentError,
      'perTool.bash.request must be',
    );
  });

  it('with an estimator that does not count reasoning, an event is not rewritten for its reasoning alone', async function () {
    const events = twoTurns();
    const r = await new ContentPolicyCompactionStrategy({ tokenCountEstimator: new CharEstimator() }).compact(
      compactionRequest(events),
    );
    // Only the tool output is stripped; the call and the answer differ from their copies by reasoning alone.
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([events[2]!.id]);
  });

  it('stripping counted reasoning saves exactly the reasoning it removes', async function () {
    const events = [U('t1'), thinking('Done.', 'r'.repeat(300)), U('t2')];
    const r = await policy().compact(compactionRequest(events));
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([events[1]!.id]);
    expect(r.tokensEstimatedSaved).to.equal(` [reasoning: ${'r'.repeat(300)}]`.length);
  });

  it("toolCalls 'omit' removes consumed call/result pairs from the window and archives both", async function () {
    const events = [
      U('t1'),
      call('c1', 'ls', '{}'),
      result('c1', 'a b c', 'ls'),
      event(
        Messages.assistant('listing and reading', {
          toolCalls: [Messages.toolCall('c2', 'ls', '{}'), Messages.toolCall('c3', 'read', '{}')],
        }),
      ),
      event(Messages.tool([Messages.toolResponse('c2', 'ls', 'x'), Messages.toolResponse('c3', 'read', long('file'))])),
      A('done'),
      U('t2'),
      call('c4', 'ls', '{}'),
      result('c4', 'y', 'ls'),
    ];
    const r = await policy({ perTool: { ls: { request: 'omit' } }, toolCalls: { response: 'keep' } }).compact(
      compactionRequest(events),
    );
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([events[1]!.id, events[2]!.id, events[3]!.id, events[4]!.id]);
    const window = r.compactedEvents;
    expect(window.map((e) => e.messageType)).to.deep.equal([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
      'tool',
    ]);
    expect(asAssistant(window[1]!).toolCalls!.map((c) => c.id)).to.deep.equal(['c3']);
    expect((window[2]!.message as { responses: { id: string }[] }).responses.map((x) => x.id)).to.deep.equal(['c3']);
    // The protected last turn keeps its pair.
    expect(window.slice(-2)).to.deep.equal(events.slice(-2));
    expect(toolPairsIntact(window)).to.equal(true);
  });

  it('through the service: originals archived, copies active, the coverage ledger holds', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: createDefaultLogger({ silent: true }) });
    const { id } = await service.create({ userId: 'u' });
    for (const e of twoTurns()) await service.appendMessage(id, e.message);
    const r = await service.compact(id, () => true, policy());
    expect(r.archivedEvents).to.have.length(3);
    const report = await service.verifyCoverage(id);
    expect(report.ok).to.equal(true);
    expect(report.masked).to.have.length(3);
  });

  it('defaults to stripping reasoning and tool outputs, keeping arguments, and protecting the last turn', function () {
    expect(new ContentPolicyCompactionStrategy()).to.deep.include({
      reasoning: 'strip',
      request: 'keep',
      response: 'strip',
      keepLast: { turns: 1 },
    });
  });

  it('a perTool entry left null follows the defaults', async function () {
    const events = [U('t1'), call('c1', 'read_file'), result('c1', long('file'), 'read_file'), A('read'), U('t2')];
    const r = await policy({ perTool: { read_file: null as never } }).compact(compactionRequest(events));
    expect(data(r.compactedEvents[2]!)).to.equal('[compacted] read_file (call c1): success');
  });

  it("toolCalls.response 'omit' removes consumed call/result pairs as request 'omit' does", async function () {
    const events = [U('t1'), call('c1', 'ls', '{}'), result('c1', 'a b c', 'ls'), A('done'), U('t2')];
    const r = await policy({ perTool: { ls: { response: 'omit' } } }).compact(compactionRequest(events));
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([events[1]!.id, events[2]!.id]);
    expect(r.compactedEvents.map((e) => e.messageType)).to.deep.equal(['user', 'assistant', 'user']);
  });

  it('an assistant message whose calls are all omitted keeps its text without calls; one without text goes', async function () {
    const events = [
      U('t1'),
      call('c1', 'ls', '{}', 'Let me look.'),
      result('c1', 'a b c', 'ls'),
      call('c2', 'ls', '{}', '  '),
      result('c2', 'd e f', 'ls'),
      A('done'),
      U('t2'),
    ];
    const r = await policy({ perTool: { ls: { request: 'omit' } } }).compact(compactionRequest(events));
    expect(r.archivedEvents).to.have.length(4);
    expect(r.compactedEvents.map((e) => e.message)).to.deep.equal([
      events[0]!.message,
      { type: 'assistant', text: 'Let me look.' },
      events[5]!.message,
      events[6]!.message,
    ]);
  });

  it('leaves pinned and synthetic events outside the protected tail as they are', async function () {
    const pinnedResult = event(Messages.tool([Messages.toolResponse('c1', 'bash', long('pinned output'))]), {
      metadata: { pinned: true },
    });
    const pinnedThought = event(Messages.assistant('Noted.', { reasoning: long('think') }), { metadata: { pinned: true } });
    const syntheticThought = event(Messages.assistant('Summary.', { reasoning: long('think') }), {
      metadata: { synthetic: true },
    });
    const events = [syntheticThought, U('t1'), call('c1'), pinnedResult, pinnedThought, U('t2')];
    const r = await policy().compact(compactionRequest(events));
    expect(r.isNoop()).to.equal(true);
  });

  it('never omits a pair whose call or result is pinned, or whose result the model has not read yet', async function () {
    const pinnedCall = event(Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'ls', '{}')] }), {
      metadata: { pinned: true },
    });
    const pinnedResult = event(Messages.tool([Messages.toolResponse('c2', 'ls', 'x')]), { metadata: { pinned: true } });
    const events = [
      U('t1'),
      pinnedCall,
      result('c1', 'a', 'ls'),
      call('c2', 'ls', '{}'),
      pinnedResult,
      A('ok'),
      call('c3', 'ls', '{}'),
      result('c3', 'b', 'ls'),
    ];
    const r = await policy({ perTool: { ls: { request: 'omit' } }, keepLast: { turns: 0 } }).compact(compactionRequest(events));
    expect(r.isNoop()).to.equal(true);
  });

  it("with request 'keep' leaves long arguments as they are", async function () {
    const args = JSON.stringify({ path: 'a.ts', content: 'y'.repeat(500) });
    const events = [U('t1'), call('c1', 'write_file', args), result('c1', 'ok', 'write_file'), A('done'), U('t2')];
    const r = await policy({ toolCalls: { request: 'keep', response: 'keep' } }).compact(compactionRequest(events));
    expect(r.isNoop()).to.equal(true);
  });

  it('replaces arguments or output by a marker only when the marker is shorter, not when it is as long', async function () {
    // Arguments and output exactly as long as their markers.
    const args = JSON.stringify({ x: 'z'.repeat(43) });
    const marker = `[compacted] bash (call c1): success`;
    const events = [U('t1'), call('c1', 'bash', args), result('c1', 'o'.repeat(marker.length)), A('done'), U('t2')];
    expect(JSON.stringify({ compacted: `${args.length} characters of arguments stripped` })).to.have.length(args.length);
    const r = await policy({ toolCalls: { request: 'strip', response: 'strip' } }).compact(compactionRequest(events));
    expect(r.isNoop()).to.equal(true);
  });

  it('with keepLast { steps } counts turn starts and step starts together, in log order', async function () {
    const events = [U('t1'), call('c1'), result('c1', long('a')), A('read it'), U('t2'), call('c2'), result('c2', long('b'))];
    // The last three starts are A('read it'), U('t2') and the second call: the first result is outside them.
    const r = await policy({ keepLast: { steps: 3 } }).compact(compactionRequest(events));
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([events[2]!.id]);
  });

  it('with exactly as many turns as it keeps, still rewrites what comes before the first turn', async function () {
    const events = [call('c0'), result('c0', long('before any question')), A('read it'), U('t1'), A('answer')];
    const r = await policy({ keepLast: { turns: 1 } }).compact(compactionRequest(events));
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([events[1]!.id]);
    expect(r.compactedEvents[1]!.metadata.compactionSource).to.equal('content-policy');
  });
});
