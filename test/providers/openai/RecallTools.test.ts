import { expect } from 'chai';
import {
  DefaultSessionService,
  IllegalStateError,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  RecallTools,
  SlidingWindowCompactionStrategy,
  type Message,
} from 'session-compaction';
import { ConversationSearchTool, CrossSessionSearchTool } from 'session-compaction/spi';
import { NO_RESULTS } from '../../../src/chat/recallSupport.js';
import { expectRejects, expectThrows } from '../../support/fixtures.js';
import { silent } from '../../chat/support/harness.js';

interface Row {
  sessionId?: string;
  timestamp: string;
  type: string;
  text: string;
}
const parse = (out: string): Row[] => (out === NO_RESULTS ? [] : (JSON.parse(out) as Row[]));
const texts = (out: string) => parse(out).map((r) => r.text);

describe('Recall tools', function () {
  let service: DefaultSessionService;
  let clock: number;
  beforeEach(function () {
    clock = Date.parse('2025-03-01T10:00:00Z');
    service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
  });

  async function session(id: string, userId: string, ...messages: Array<Message | [Message, string]>) {
    await service.create({ id, userId });
    for (const m of messages) {
      const [message, branch] = Array.isArray(m) ? m : [m, null];
      clock += 1000;
      await service.appendMessage(id, message, { branch, timestamp: new Date(clock) });
    }
  }
  const U = Messages.user;
  const A = (t: string) => Messages.assistant(t);

  describe('conversation_search', function () {
    const tool = () => new ConversationSearchTool({ sessionService: service });
    const ctx = { sessionId: 'c1', userId: 'alice' };

    it('validates its options', function () {
      expectThrows(
        () => new ConversationSearchTool({ sessionService: null as never }),
        InvalidArgumentError,
        'sessionService must not be null',
      );
      expectThrows(
        () => new ConversationSearchTool({ sessionService: service, pageSize: 0 }),
        InvalidArgumentError,
        'pageSize must be positive',
      );
      expect(tool().pageSize).to.equal(10);
    });

    it('is an OpenAI function tool with innerThought, query and page', function () {
      const d = tool().definition;
      expect(d.type).to.equal('function');
      expect(d.function.name).to.equal('conversation_search');
      expect(Object.keys(d.function.parameters!.properties as object)).to.deep.equal(['innerThought', 'query', 'page']);
      expect(d.function.parameters!.required).to.deep.equal(['innerThought', 'query']);
    });

    it('finds archived events: a fact compacted out of the window stays reachable (scenario 88)', async function () {
      await session('c1', 'alice', U('the secret code is alpha-7'), ...[1, 2, 3, 4, 5].map((i) => U(`filler-${i}`)));
      await service.compact('c1', () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
      const rows = parse(await tool().execute({ innerThought: 'recall', query: 'alpha-7' }, ctx));
      expect(rows).to.have.length(1);
      expect(rows[0]).to.deep.equal({
        timestamp: new Date(Date.parse('2025-03-01T10:00:01Z')).toISOString(),
        type: 'user',
        text: 'the secret code is alpha-7',
      });
    });

    it('finds summaries (synthetic events) too', async function () {
      await session('c1', 'alice', U('q'));
      await service.appendMessage('c1', A('Summary: user prefers aisle seats'), { metadata: { synthetic: true } });
      expect(texts(await tool().execute('{"innerThought":"x","query":"aisle"}', ctx))).to.deep.equal([
        'Summary: user prefers aisle seats',
      ]);
    });

    it('answers "No results found." when nothing matches, and for a session that does not exist yet', async function () {
      await session('c1', 'alice', U('hello'));
      expect(await tool().execute({ query: 'absent' }, ctx)).to.equal('No results found.');
      expect(await tool().execute({ query: 'hello' }, { sessionId: 'nope', userId: 'alice' })).to.equal('No results found.');
    });

    it('paginates with the page size; a missing or negative page is page 0', async function () {
      await session('c1', 'alice', ...Array.from({ length: 7 }, (_, i) => U(`spring message ${i + 1}`)));
      const small = new ConversationSearchTool({ sessionService: service, pageSize: 3 });
      expect(texts(await small.execute({ query: 'spring' }, ctx))).to.deep.equal([
        'spring message 1',
        'spring message 2',
        'spring message 3',
      ]);
      expect(texts(await small.execute({ query: 'spring', page: 1 }, ctx))).to.deep.equal([
        'spring message 4',
        'spring message 5',
        'spring message 6',
      ]);
      expect(texts(await small.execute({ query: 'spring', page: 2 }, ctx))).to.deep.equal(['spring message 7']);
      expect(texts(await small.execute({ query: 'spring', page: -4 }, ctx))).to.deep.equal(
        texts(await small.execute({ query: 'spring' }, ctx)),
      );
      expect(await small.execute({ query: 'spring', page: 5 }, ctx)).to.equal(NO_RESULTS);
    });

    it('drops blank-text events after paging, so a page can be short (as in Java)', async function () {
      await session('c1', 'alice', U('a'), Messages.tool([Messages.toolResponse('t', 'f', 'data')]), U('b'));
      const small = new ConversationSearchTool({ sessionService: service, pageSize: 2 });
      expect(texts(await small.execute({ query: '' }, ctx))).to.deep.equal(['a']);
      expect(texts(await small.execute({ query: '', page: 1 }, ctx))).to.deep.equal(['b']);
    });

    it('is scoped to the caller branch: own branch and ancestors, never siblings (the Java leak)', async function () {
      await session(
        'c1',
        'alice',
        U('root note'),
        [A('orch note'), 'orch'],
        [A('researcher note'), 'orch.researcher'],
        [A('writer note'), 'orch.writer'],
      );
      const researcher = { ...ctx, branch: 'orch.researcher' };
      expect(texts(await tool().execute({ query: 'note' }, researcher))).to.deep.equal([
        'root note',
        'orch note',
        'researcher note',
      ]);
      expect(texts(await tool().execute({ query: 'note' }, ctx))).to.deep.equal(['root note']);
    });

    it("refuses to search another user's session, whatever the model passes as arguments", async function () {
      await session('c1', 'alice', U('alice private'));
      await expectRejects(
        tool().execute({ query: 'private' }, { sessionId: 'c1', userId: 'mallory' }),
        IllegalStateError,
        "Session 'c1' does not belong to user 'mallory'. Access denied.",
      );
      await session('m1', 'mallory', U('mallory own'));
      const out = await tool().execute(
        { query: 'private', sessionId: 'c1', userId: 'alice' },
        { sessionId: 'm1', userId: 'mallory' },
      );
      expect(out).to.equal(NO_RESULTS);
    });
  });

  describe('cross_session_search', function () {
    const tool = (pageSize?: number) =>
      new CrossSessionSearchTool({ sessionService: service, ...(pageSize ? { pageSize } : {}) });
    const alice = { sessionId: 'a1', userId: 'alice' };

    beforeEach(async function () {
      await session('a1', 'alice', U('I like spring boot'), A('Spring is nice'));
      await session('b1', 'bob', U('bob also likes spring'));
      await session('a2', 'alice', U('boot camp next week'), A('noted: camp'));
    });

    it('validates its options and declares its parameters', function () {
      expectThrows(
        () => new CrossSessionSearchTool({ sessionService: service, pageSize: -1 }),
        InvalidArgumentError,
        'pageSize must be positive',
      );
      const d = tool().definition.function;
      expect(d.name).to.equal('cross_session_search');
      expect(Object.keys(d.parameters!.properties as object)).to.deep.equal([
        'innerThought',
        'query',
        'matchMode',
        'since',
        'page',
      ]);
      expect(CrossSessionSearchTool.MAX_QUERY_TERMS).to.equal(20);
    });

    it("searches every session of the caller's user only, sorted by time, with the session id", async function () {
      const rows = parse(await tool().execute({ query: 'spring' }, alice));
      expect(rows.map((r) => [r.sessionId, r.text])).to.deep.equal([
        ['a1', 'I like spring boot'],
        ['a1', 'Spring is nice'],
      ]);
      expect(Object.keys(rows[0]!)).to.deep.equal(['sessionId', 'timestamp', 'type', 'text']);
    });

    it('ignores user or session ids the model puts in its arguments', async function () {
      const out = await tool().execute({ query: 'bob', userId: 'bob', sessionId: 'b1' }, alice);
      expect(out).to.equal(NO_RESULTS);
    });

    it('one term is a keyword; several match ANY by default and ALL on request', async function () {
      expect(texts(await tool().execute({ query: 'boot' }, alice))).to.deep.equal(['I like spring boot', 'boot camp next week']);
      expect(texts(await tool().execute({ query: 'spring, camp' }, alice))).to.deep.equal([
        'I like spring boot',
        'Spring is nice',
        'boot camp next week',
        'noted: camp',
      ]);
      expect(texts(await tool().execute({ query: 'spring,boot', matchMode: 'ALL' }, alice))).to.deep.equal([
        'I like spring boot',
      ]);
    });

    it('a blank query returns every text event of the user, archived and synthetic included', async function () {
      await service.compact('a1', () => true, new SlidingWindowCompactionStrategy({ maxEvents: 1 }));
      await service.appendMessage('a2', A('summary of a2'), { metadata: { synthetic: true }, timestamp: new Date(clock + 1000) });
      expect(texts(await tool().execute({ query: '  ' }, alice))).to.deep.equal([
        'I like spring boot',
        'Spring is nice',
        'boot camp next week',
        'noted: camp',
        'summary of a2',
      ]);
    });

    it('since keeps events at or after the instant; a bad since is an error naming the value', async function () {
      const since = new Date(Date.parse('2025-03-01T10:00:04Z')).toISOString();
      expect(texts(await tool().execute({ query: '', since }, alice))).to.deep.equal(['boot camp next week', 'noted: camp']);
      await expectRejects(tool().execute({ query: 'x', since: 'yesterday' }, alice), InvalidArgumentError, "since 'yesterday'");
    });

    it('rejects more than 20 terms and a query with no usable terms', async function () {
      const many = Array.from({ length: 21 }, (_, i) => `t${i}`).join(',');
      const tooMany = await expectRejects(tool().execute({ query: many }, alice), InvalidArgumentError, '21');
      expect(tooMany.message).to.include('20');
      await expectRejects(
        tool().execute({ query: ' , ,' }, alice),
        InvalidArgumentError,
        "query ' , ,' contained no usable search terms after splitting on ','",
      );
    });

    it('paginates the aggregated, sorted results; a huge page is empty', async function () {
      expect(texts(await tool(3).execute({ query: '', page: 1 }, alice))).to.deep.equal(['noted: camp']);
      expect(await tool(3).execute({ query: '', page: Number.MAX_SAFE_INTEGER }, alice)).to.equal(NO_RESULTS);
    });

    it('applies branch visibility in every session', async function () {
      await service.appendMessage('a2', A('spring from the writer'), { branch: 'orch.writer' });
      await service.appendMessage('a2', A('spring from the researcher'), { branch: 'orch.researcher' });
      const researcher = { ...alice, branch: 'orch.researcher' };
      expect(texts(await tool().execute({ query: 'spring' }, researcher)))
        .to.include('spring from the researcher')
        .and.not.include('spring from the writer');
      expect(texts(await tool().execute({ query: 'spring' }, alice))).to.not.include('spring from the researcher');
    });
  });

  describe('RecallTools dispatcher', function () {
    const tools = () => new RecallTools({ sessionService: service });
    const call = (name: string, args: string) => ({
      id: 'call-1',
      type: 'function' as const,
      function: { name, arguments: args },
    });

    it('offers both definitions and answers a tool call with a tool message', async function () {
      await session('s', 'alice', U('remember the blue door'));
      expect(tools().definitions.map((d) => d.function.name)).to.deep.equal(['conversation_search', 'cross_session_search']);
      const reply = await tools().execute(call('conversation_search', '{"innerThought":"?","query":"blue"}'), {
        sessionId: 's',
        userId: 'alice',
      });
      expect(reply.role).to.equal('tool');
      expect(reply.tool_call_id).to.equal('call-1');
      expect(texts(reply.content as string)).to.deep.equal(['remember the blue door']);
    });

    it("turns the model's bad arguments into an error text it can read, but throws an access violation", async function () {
      await session('s', 'alice', U('x'));
      const bad = await tools().execute(call('cross_session_search', '{"query":"a","since":"not-a-date"}'), {
        sessionId: 's',
        userId: 'alice',
      });
      expect(bad.content).to.equal("Error: since 'not-a-date' is not an ISO-8601 instant (e.g. 2025-01-31T10:00:00Z)");
      const malformed = await tools().execute(call('conversation_search', '{not json'), { sessionId: 's', userId: 'alice' });
      expect(malformed.content).to.equal('Error: tool arguments must be a JSON object');
      await expectRejects(
        tools().execute(call('conversation_search', '{"query":"x"}'), { sessionId: 's', userId: 'eve' }),
        IllegalStateError,
        'Access denied.',
      );
    });

    it('recognises only its own tools', function () {
      expect(tools().handles(call('get_weather', '{}'))).to.equal(false);
      expect(tools().handles(call('cross_session_search', '{}'))).to.equal(true);
    });
  });
});
