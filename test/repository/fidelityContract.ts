/**
 * Part of the repository contract (included by contract.ts, so every backend runs it): what is appended is
 * what is read, character for character, whatever the content holds; malformed input from plain JavaScript
 * or JSON is refused with InvalidArgumentError before anything is written; huge but integral windows mean
 * "everything" / "nothing"; and random JSON fed to the public entries never yields anything else.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import {
  DefaultSessionService,
  EventFilter,
  InvalidArgumentError,
  Messages,
  Session,
  SessionEvent,
  createDefaultLogger,
  type Message,
  type SessionRepository,
} from 'session-compaction';

const logger = createDefaultLogger({ silent: true });
let counter = 0;
const uid = (p: string) => `${p}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

/** Content the stores cannot hold as such (NUL, lone surrogates), the escape character and look-alikes of its sequences. */
export const TRICKY_TEXTS: readonly string[] = [
  'nul \u0000 inside',
  '\u0000',
  '\u0000\u0000start and end\u0000',
  'lone high \uD83D',
  '\uDE00 lone low first',
  'reversed pair \uDE00\uD83D',
  'high at end \uD800',
  'emoji 😀 pair 👩‍👩‍👧 flag 🇫🇷',
  'escape \uFDD0 itself',
  '\uFDD0\uFDD1 \uFDD0\uFDD0 \uFDD0\uFDD2\uFDD0\uFDD1 \uFDD0\uFDD3 \uFDEF \uFDD1',
  'bom \uFEFF nonchars \uFFFE \uFFFF replacement \uFFFD',
  'separators \u2028 \u2029 controls \u0001\u001f\u007f',
  'rtl \u202Eabc combining e\u0301',
  'backslash-u as text \\u0000 \\ud83d',
  '',
];

function trickyMessages(t: string, i: number): Message[] {
  return [
    Messages.user(t),
    Messages.system(t),
    Messages.assistant(t, { reasoning: t }),
    Messages.assistant(null, { toolCalls: [Messages.toolCall(`call-${i}-${t}`, `fn${t}`, `{"q":${JSON.stringify(t)}}`)] }),
    Messages.tool([Messages.toolResponse(`call-${i}-${t}`, `fn${t}`, t)]),
  ];
}

const shape = (e: SessionEvent) => ({
  id: e.id,
  message: e.message,
  metadata: e.metadata,
  branch: e.branch,
  timestamp: e.timestamp.getTime(),
  archived: e.archived,
});

async function caught(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  return undefined;
}

/** A string over the characters that matter here, so random content often holds them. */
const anyContent = fc.string({
  unit: fc.oneof(
    fc.constantFrom('\u0000', '\uFDD0', '\uFDD1', '\uFDD2', '\uFDD3', '\uFDEF', '\uD83D', '\uDE00', 'a', ' '),
    fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  ),
  maxLength: 12,
});

/** Messages that are sometimes valid and sometimes not, in every way JSON can get them wrong. */
const anyMessage: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  fc.record(
    {
      type: fc.oneof(fc.constantFrom('user', 'assistant', 'system', 'tool'), fc.jsonValue()),
      text: fc.oneof(anyContent, fc.jsonValue()),
      toolCalls: fc.oneof(
        fc.array(
          fc.record({
            id: fc.oneof(anyContent, fc.jsonValue()),
            name: anyContent,
            arguments: fc.oneof(anyContent, fc.jsonValue()),
          }),
        ),
        fc.jsonValue(),
      ),
      responses: fc.oneof(
        fc.array(fc.record({ id: anyContent, name: anyContent, responseData: fc.oneof(anyContent, fc.jsonValue()) })),
        fc.jsonValue(),
      ),
      reasoning: fc.oneof(anyContent, fc.jsonValue()),
    },
    { requiredKeys: ['type'] },
  ),
);

export function fidelityContract(getRepository: () => SessionRepository): void {
  let repo: SessionRepository;
  let service: DefaultSessionService;
  beforeEach(function () {
    repo = getRepository();
    service = new DefaultSessionService(repo, { logger });
  });

  async function newSession(): Promise<string> {
    const s = await repo.save(Session.create({ id: uid('fid'), userId: 'fidelity' }));
    return s.id;
  }

  describe('text fidelity', function () {
    it('content with NUL, unpaired surrogates, the escape character and astral text reads back byte for byte', async function () {
      const id = await newSession();
      const appended: SessionEvent[] = [];
      for (const [i, t] of TRICKY_TEXTS.entries()) {
        for (const message of trickyMessages(t, i)) {
          const e = SessionEvent.create({ sessionId: id, id: uid('t'), message, metadata: { [`k${t}`]: t, list: [t, { t }] } });
          await repo.appendEvent(e);
          appended.push(e);
        }
      }
      const read = await repo.findEvents(id);
      expect(read.map(shape)).to.deep.equal(appended.map(shape));
      // And through a compaction, which rewrites the window and archives in place.
      const half = Math.floor(read.length / 2);
      const version = await repo.getEventVersion(id);
      expect(await repo.compactEvents(id, read.slice(0, half), read.slice(half), version)).to.equal(true);
      expect((await repo.findEvents(id)).map((e) => e.message)).to.deep.equal(appended.map((e) => e.message));
    });

    it('a tool call and a tool response with an empty id read back as appended (providers without call ids send none)', async function () {
      const id = await newSession();
      const call = await service.appendMessage(id, {
        type: 'assistant',
        text: null,
        toolCalls: [{ id: '', type: 'function', name: 'lookup', arguments: '{}' }],
      });
      const result = await service.appendMessage(id, {
        type: 'tool',
        responses: [{ id: '', name: 'lookup', responseData: 'found' }],
      });
      const read = await service.getEvents(id);
      expect(read.map(shape)).to.deep.equal([call, result].map(shape));
      expect((await service.verifyCoverage(id)).malformed).to.deep.equal([]);
    });

    it('keywords holding NUL, a lone surrogate or the escape character match exactly as in memory', async function () {
      const id = await newSession();
      const events: SessionEvent[] = [];
      for (const t of TRICKY_TEXTS) {
        const e = SessionEvent.create({ sessionId: id, id: uid('k'), message: Messages.user(t) });
        await repo.appendEvent(e);
        events.push(e);
      }
      for (const keyword of [
        '\u0000',
        '\uD83D',
        '\uDE00',
        '\uFDD0',
        '\uFDD1',
        '\uFDD0\uFDD1',
        'x',
        'nul',
        '\\u0000',
        '😀',
        'E\u0301',
      ]) {
        const filter = EventFilter.of({ keyword });
        const expected = events.filter((e) => filter.matches(e)).map((e) => e.id);
        expect(
          (await repo.findEvents(id, filter)).map((e) => e.id),
          JSON.stringify(keyword),
        ).to.deep.equal(expected);
      }
    });

    it('identifiers with NUL or an unpaired surrogate are refused before they reach the store', async function () {
      const id = await newSession();
      for (const bad of ['a\u0000b', 'lone \uD800', '\uDC00']) {
        expect(() => Session.create({ id: bad, userId: 'u' })).to.throw(InvalidArgumentError, 'id must not contain');
        expect(() => Session.create({ id: uid('ok'), userId: bad })).to.throw(InvalidArgumentError, 'userId must not contain');
        expect(() => SessionEvent.create({ sessionId: id, id: bad, message: Messages.user('x') })).to.throw(InvalidArgumentError);
        expect(() => SessionEvent.create({ sessionId: id, message: Messages.user('x'), branch: bad })).to.throw(
          InvalidArgumentError,
          'branch must not contain',
        );
        expect(await caught(() => service.findById(bad))).to.be.instanceOf(InvalidArgumentError);
        expect(await caught(() => service.getEvents(bad))).to.be.instanceOf(InvalidArgumentError);
      }
    });

    it('a repository called directly with a NUL id answers "nothing there" or InvalidArgumentError, never a driver error', async function () {
      for (const call of [
        () => repo.findById('a\u0000b'),
        () => repo.findEvents('a\u0000b'),
        () => repo.getEventVersion('a\u0000b'),
        () => repo.findByUserId('a\u0000b'),
        () => repo.delete('a\u0000b'),
      ]) {
        const error = await caught(call);
        if (error !== undefined) expect(error).to.be.instanceOf(InvalidArgumentError);
      }
    });
  });

  describe('the validation boundary', function () {
    const malformed: Array<[string, unknown, string]> = [
      ['user text that is a number', { type: 'user', text: 42 }, 'message.text must be a string (got number)'],
      ['user text that is an object', { type: 'user', text: { a: 1 } }, 'message.text must be a string (got object)'],
      ['user text that is an array', { type: 'user', text: ['a'] }, 'message.text must be a string (got array)'],
      ['assistant text 42', { type: 'assistant', text: 42 }, 'message.text must be a string (got number)'],
      [
        'a tool response whose data is an object',
        { type: 'tool', responses: [{ id: 'c1', name: 'f', responseData: { temp: 22 } }] },
        'message.responses[0].responseData must be a string (got object)',
      ],
      ['a tool message without responses', { type: 'tool' }, 'message.responses must be an array (got undefined)'],
      [
        'assistant toolCalls "x"',
        { type: 'assistant', text: null, toolCalls: 'x' },
        'message.toolCalls must be an array (got string)',
      ],
      ['an unknown type', { type: 'robot', text: 'hi' }, 'unknown message type: robot'],
      ['no message', null, 'message must not be null'],
      ['a string instead of a message', 'hello', 'message must be an object (got string)'],
    ];
    for (const [what, message, error] of malformed) {
      it(`refuses ${what} with InvalidArgumentError before any write`, async function () {
        const id = await newSession();
        await service.appendMessage(id, Messages.user('before'));
        const version = await repo.getEventVersion(id);
        const e = await caught(() => service.appendMessage(id, message as Message));
        expect(e).to.be.instanceOf(InvalidArgumentError);
        expect((e as Error).message).to.include(error);
        expect(await repo.getEventVersion(id)).to.equal(version);
        expect((await service.getEvents(id, EventFilter.keywordSearch('before'))).length).to.equal(1);
      });
    }

    it('refuses metadata that is not JSON (a function, a BigInt, a cycle, a Date, NaN) and an invalid timestamp', async function () {
      const id = await newSession();
      const cycle: Record<string, unknown> = {};
      cycle.self = cycle;
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ metadata: { f: () => 1 } }, 'metadata.f must be a JSON value (got function)'],
        [{ metadata: { n: 1n } }, 'metadata.n must be a JSON value (got bigint)'],
        [{ metadata: cycle }, 'must not contain a cycle'],
        [{ metadata: { at: new Date() } }, 'metadata.at must be a JSON value (got Date)'],
        [{ metadata: { x: Number.NaN } }, 'metadata.x must be a finite number (got NaN)'],
        [{ metadata: 'tag' }, 'metadata must be a plain object (got string)'],
        [{ timestamp: new Date('nope') }, 'timestamp must be a valid Date (got Invalid Date)'],
        [{ timestamp: new Date(-8.6e15) }, 'timestamp must be between year 1 and year 275760'],
        [{ timestamp: '2025-01-01' }, 'timestamp must be a valid Date (got string)'],
        [{ branch: 7 }, 'branch must be a string or null (got number)'],
      ];
      for (const [options, message] of bad) {
        const e = await caught(() => service.appendMessage(id, Messages.user('x'), options as never));
        expect(e, message).to.be.instanceOf(InvalidArgumentError);
        expect((e as Error).message).to.include(message);
      }
      expect(await repo.getEventVersion(id)).to.equal(0);
    });

    it('metadata is stored as JSON would: undefined properties dropped, -0 as 0, a "__proto__" key as data', async function () {
      const id = await newSession();
      const metadata = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
      const e = await service.appendMessage(id, Messages.user('x'), { metadata: { ...metadata, gone: undefined, zero: -0 } });
      expect(Object.keys(e.metadata).sort()).to.deep.equal(['__proto__', 'a', 'zero']);
      expect(Object.is(e.metadata.zero, 0)).to.equal(true);
      expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
      const [read] = await repo.findEvents(id);
      expect(read!.metadata).to.deep.equal(e.metadata);
    });

    it('a time to live that overflows the date range is refused and nothing is created', async function () {
      const userId = uid('ttl');
      for (const timeToLiveMs of [1e20, 8.64e15, -1e17, Number.MAX_VALUE]) {
        const e = await caught(() => service.create({ userId, timeToLiveMs }));
        expect(e, String(timeToLiveMs)).to.be.instanceOf(InvalidArgumentError);
        expect((e as Error).message).to.include('timeToLiveMs');
      }
      for (const timeToLiveMs of [Number.NaN, Number.POSITIVE_INFINITY, '60' as unknown as number]) {
        expect(await caught(() => service.create({ userId, timeToLiveMs }))).to.be.instanceOf(InvalidArgumentError);
      }
      expect(await repo.findByUserId(userId)).to.deep.equal([]);
    });

    it('a huge but integral lastN or pageSize means everything, a huge page means nothing', async function () {
      const id = await newSession();
      for (const t of ['a', 'b', 'c']) await service.appendMessage(id, Messages.user(t));
      const texts = async (f: EventFilter) => (await repo.findEvents(id, f)).map((e) => e.text);
      for (const n of [2 ** 53, 2 ** 60, 1e300, Number.MAX_VALUE]) {
        expect(await texts(EventFilter.lastN(n)), `lastN ${n}`).to.deep.equal(['a', 'b', 'c']);
        expect(await texts(EventFilter.of({ lastN: n, excludeArchived: true })), `active lastN ${n}`).to.deep.equal([
          'a',
          'b',
          'c',
        ]);
        expect(await texts(EventFilter.of({ page: 0, pageSize: n })), `pageSize ${n}`).to.deep.equal(['a', 'b', 'c']);
        expect(await texts(EventFilter.of({ page: n, pageSize: 10 })), `page ${n}`).to.deep.equal([]);
        expect(await texts(EventFilter.of({ page: n, pageSize: n })), `page and pageSize ${n}`).to.deep.equal([]);
      }
    });

    it('filters from JSON with the wrong types are refused with InvalidArgumentError naming the field', async function () {
      const id = await newSession();
      const bad: Array<[unknown, string]> = [
        [{ keyword: 42 }, 'keyword must be a string (got number)'],
        [{ keywords: 'abc' }, 'keywords must be an array of strings (got string)'],
        [{ keywords: ['a', 1] }, 'keywords[1] must be a string (got number)'],
        [{ messageTypes: 'user' }, 'messageTypes must be an array (got string)'],
        [{ from: '2025-01-01' }, 'from must be a valid Date (got string)'],
        [{ lastN: '5' }, 'lastN must be an integer'],
        [{ excludeArchived: 'yes' }, 'excludeArchived must be a boolean (got string)'],
        [{ pattern: '.*' }, 'pattern must be a RegExp'],
        ['everything', 'filter must be an EventFilter or filter options (got string)'],
      ];
      for (const [filter, message] of bad) {
        const e = await caught(() => service.getEvents(id, filter as EventFilter));
        expect(e, message).to.be.instanceOf(InvalidArgumentError);
        expect((e as Error).message).to.include(message);
      }
    });

    it('fuzz: random JSON as message and options gives InvalidArgumentError or an event that reads back identically; the session stays usable', async function () {
      this.timeout(120_000);
      const id = await newSession();
      const stored: SessionEvent[] = [];
      await fc.assert(
        fc.asyncProperty(
          anyMessage,
          fc.option(fc.record({ metadata: fc.jsonValue(), branch: fc.jsonValue(), id: fc.jsonValue() }, { requiredKeys: [] })),
          async (message, options) => {
            let event: SessionEvent | undefined;
            try {
              event = await service.appendMessage(id, message as Message, (options ?? undefined) as never);
            } catch (error) {
              if (!(error instanceof InvalidArgumentError)) throw error;
            }
            // A repeated id is an idempotent replay: the first event stays.
            if (event !== undefined && !stored.some((e) => e.id === event.id)) stored.push(event);
            // Nothing poisons the session: every filter and the coverage ledger still read it.
            const all = await service.getEvents(id);
            expect(all.map(shape)).to.deep.equal(stored.map(shape));
            await service.getEvents(id, EventFilter.of({ keyword: 'a' }));
            await service.getEvents(id, EventFilter.of({ keywords: ['\u0000', 'x'], matchMode: 'any', lastN: 3 }));
            await service.getEvents(id, EventFilter.of({ pattern: /./ }));
            expect((await service.verifyCoverage(id)).malformed).to.deep.equal([]);
          },
        ),
        { numRuns: 40 },
      );
    });
  });
}
