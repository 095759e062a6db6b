import { expect } from 'chai';
import { CorruptedRecordError, Messages, SessionEvent, type Message } from 'session-compaction';
import { expectThrows } from '../support/fixtures.js';
import { decodeEvent, encodeEvent, escapeLike, type StoredEvent } from 'session-compaction/spi';
import { malformedProblems } from '../../src/session/malformedEvents.js';

const T = new Date('2025-06-01T12:00:00Z');
const make = (message: Message, extra: Partial<Parameters<typeof SessionEvent.create>[0]> = {}) =>
  SessionEvent.create({ id: 'e1', sessionId: 's1', timestamp: T, message, ...extra });
/** A stored row as an older release may have written it: the well-formed fields, then the ones under test. */
const row = (fields: Record<string, unknown>): StoredEvent =>
  ({
    id: 'e1',
    sessionId: 's1',
    timestamp: T.getTime(),
    messageType: 'user',
    text: 'hi',
    data: null,
    synthetic: false,
    archived: false,
    branch: null,
    metadata: '{}',
    ...fields,
  }) as StoredEvent;

describe('eventCodec', function () {
  describe('encodeEvent', function () {
    it('stores a user message as searchable text with no structured data', function () {
      const stored = encodeEvent(make(Messages.user('hello'), { metadata: { k: 'v' }, branch: 'orch' }));
      expect(stored).to.deep.equal({
        id: 'e1',
        sessionId: 's1',
        timestamp: T.getTime(),
        messageType: 'user',
        text: 'hello',
        data: null,
        synthetic: false,
        archived: false,
        branch: 'orch',
        metadata: '{"k":"v"}',
      });
    });

    it('stores tool calls and reasoning of an assistant message as data, and an assistant message without either as none', function () {
      const call = Messages.toolCall('c1', 'f', '{}');
      expect(JSON.parse(encodeEvent(make(Messages.assistant('a', { toolCalls: [call] }))).data!)).to.deep.equal({
        toolCalls: [call],
      });
      expect(JSON.parse(encodeEvent(make(Messages.assistant('a', { reasoning: '' }))).data!)).to.deep.equal({ reasoning: '' });
      expect(JSON.parse(encodeEvent(make(Messages.assistant(null, { toolCalls: [call], reasoning: 'r' }))).data!)).to.deep.equal({
        toolCalls: [call],
        reasoning: 'r',
      });
      const plain = encodeEvent(make(Messages.assistant(null)));
      expect([plain.data, plain.text]).to.deep.equal([null, null]);
    });

    it('stores the responses of a tool message as data and no text', function () {
      const response = Messages.toolResponse('c1', 'f', 'ok');
      const stored = encodeEvent(make(Messages.tool([response])));
      expect(JSON.parse(stored.data!)).to.deep.equal({ responses: [response] });
      expect(stored.text).to.equal(null);
    });

    it('records whether the event is synthetic and archived; an explicit archived flag wins', function () {
      const summary = make(Messages.assistant('s'), { metadata: { synthetic: true }, archived: true });
      expect(encodeEvent(summary)).to.include({ synthetic: true, archived: true });
      expect(encodeEvent(summary, false).archived).to.equal(false);
      expect(encodeEvent(make(Messages.user('u')), true).archived).to.equal(true);
    });

    it('encodes NUL and unpaired surrogates so the JSON holds none, and reads back exactly what was stored', function () {
      const odd = 'a\u0000b\uD800c';
      const e = make(Messages.tool([Messages.toolResponse('c1', 'f', odd)]), { metadata: { note: odd } });
      const stored = encodeEvent(e);
      expect(stored.data).to.not.match(/\\u0000|\\ud800/i);
      expect(stored.metadata).to.not.match(/\\u0000|\\ud800/i);
      const back = decodeEvent(stored);
      expect(back.message).to.deep.equal(e.message);
      expect(back.metadata).to.deep.equal({ note: odd });
      expect(malformedProblems(back)).to.deep.equal([]);
    });

    it('leaves ordinary JSON as JSON.stringify writes it', function () {
      const e = make(Messages.tool([Messages.toolResponse('c1', 'f', 'plain "quoted" text')]));
      expect(encodeEvent(e).data).to.equal(JSON.stringify({ responses: e.message.type === 'tool' ? e.message.responses : [] }));
    });
  });

  describe('decodeEvent', function () {
    it('reads back every kind of event as it was encoded', function () {
      const call = Messages.toolCall('c1', 'f', '{"x":1}');
      const events = [
        make(Messages.user('u'), { branch: 'orch.sub', metadata: { pinned: true } }),
        make(Messages.system('s')),
        make(Messages.assistant('a', { toolCalls: [call], reasoning: 'r' }), { archived: true }),
        make(Messages.assistant(null)),
        make(Messages.tool([Messages.toolResponse('c1', 'f', 'data')])),
      ];
      for (const e of events) {
        const back = decodeEvent(encodeEvent(e));
        expect(back.message).to.deep.equal(e.message);
        expect([back.id, back.sessionId, back.timestamp.getTime(), back.branch, back.archived]).to.deep.equal([
          e.id,
          e.sessionId,
          e.timestamp.getTime(),
          e.branch,
          e.archived,
        ]);
        expect(back.metadata).to.deep.equal(e.metadata);
        expect(malformedProblems(back), e.messageType).to.deep.equal([]);
      }
    });

    it('reads an unknown message type as an assistant message and says so', function () {
      const back = decodeEvent(row({ messageType: 'function', text: 'x' }));
      expect(back.message).to.deep.equal({ type: 'assistant', text: 'x' });
      expect(malformedProblems(back)).to.deep.equal(['unknown message type string function']);
    });

    it('reads a text that is not a string as no text, and a user message without text as empty', function () {
      const numeric = decodeEvent(row({ text: 42 }));
      expect(numeric.message).to.deep.equal({ type: 'user', text: '' });
      expect(malformedProblems(numeric)).to.deep.equal(['text was number']);
      const missing = decodeEvent(row({ messageType: 'system', text: null }));
      expect(missing.message).to.deep.equal({ type: 'system', text: '' });
      expect(malformedProblems(missing)).to.deep.equal(['text missing']);
      expect(malformedProblems(decodeEvent(row({ text: undefined })))).to.deep.equal(['text missing']);
    });

    it('refuses data that is not JSON: a corrupted row, named by session and event', function () {
      const error = expectThrows(
        () => decodeEvent(row({ messageType: 'assistant', text: 'a', data: '{oops' })),
        CorruptedRecordError,
        'Corrupted stored event e1 of session s1: data is not JSON',
      ) as CorruptedRecordError;
      expect([error.sessionId, error.eventId, error.field]).to.deep.equal(['s1', 'e1', 'data']);
    });

    it('reads data of the wrong shape as none and says why', function () {
      expect(malformedProblems(decodeEvent(row({ messageType: 'assistant', text: 'a', data: '[1]' })))).to.deep.equal([
        'data was array, not an object',
      ]);
      expect(malformedProblems(decodeEvent(row({ messageType: 'assistant', text: 'a', data: '""' })))).to.deep.equal([
        'data was string, not an object',
      ]);
      expect(malformedProblems(decodeEvent(row({ messageType: 'assistant', text: 'a', data: '' })))).to.deep.equal([]);
    });

    it('accepts data and metadata already parsed (a JSON column)', function () {
      const back = decodeEvent(
        row({
          messageType: 'tool',
          text: null,
          data: { responses: [{ id: 'c1', name: 'f', responseData: 'ok' }] },
          metadata: { k: 1 },
        }),
      );
      expect(back.message).to.deep.equal({ type: 'tool', responses: [{ id: 'c1', name: 'f', responseData: 'ok' }] });
      expect(back.metadata).to.deep.equal({ k: 1 });
      expect(malformedProblems(back)).to.deep.equal([]);
    });

    it('leaves out malformed tool calls and counts them, and keeps an empty call id', function () {
      const good = { id: '', name: 'f', arguments: '{}' };
      const back = decodeEvent(
        row({
          messageType: 'assistant',
          text: null,
          data: JSON.stringify({ toolCalls: [good, { id: 'c2', name: 'g' }, 'call', { id: 'c3', name: 1, arguments: '{}' }] }),
        }),
      );
      expect(back.message).to.deep.equal({ type: 'assistant', text: null, toolCalls: [{ ...good, type: 'function' }] });
      expect(malformedProblems(back)).to.deep.equal(['3 malformed toolCalls left out']);
    });

    it('reads tool calls that are not a list as none, and reasoning that is not a string as none', function () {
      const back = decodeEvent(
        row({ messageType: 'assistant', text: 'a', data: JSON.stringify({ toolCalls: { id: 'c1' }, reasoning: 5 }) }),
      );
      expect(back.message).to.deep.equal({ type: 'assistant', text: 'a' });
      expect(malformedProblems(back)).to.deep.equal(['toolCalls was object, not an array', 'reasoning was number']);
    });

    it('keeps the well-formed responses of a tool message and says what was wrong with the rest', function () {
      const ok = { id: 'c1', name: 'f', responseData: 'ok' };
      const back = decodeEvent(
        row({
          messageType: 'tool',
          text: null,
          data: JSON.stringify({ responses: [ok, { id: 'c2', name: 'f' }, { id: 3, name: 'f', responseData: 'x' }] }),
        }),
      );
      expect(back.message).to.deep.equal({ type: 'tool', responses: [ok] });
      expect(malformedProblems(back)).to.deep.equal(['2 malformed responses left out']);
      const none = decodeEvent(row({ messageType: 'tool', text: null, data: null }));
      expect(none.message).to.deep.equal({ type: 'tool', responses: [] });
      expect(malformedProblems(none)).to.deep.equal(['tool message without responses']);
    });

    it('reads an unreadable timestamp as the epoch, a non-string branch as the root, and only archived === true as archived', function () {
      const back = decodeEvent(row({ timestamp: 'yesterday', branch: 7, archived: 1 }));
      expect(back.timestamp.getTime()).to.equal(0);
      expect(back.branch).to.equal(null);
      expect(back.archived).to.equal(false);
      expect(malformedProblems(back)).to.deep.equal(['timestamp was string', 'branch was number']);
      expect(decodeEvent(row({ timestamp: String(T.getTime()) })).timestamp.getTime()).to.equal(T.getTime());
      expect(malformedProblems(decodeEvent(row({ branch: undefined })))).to.deep.equal([]);
    });

    it('reads metadata that is not an object as empty and says so', function () {
      const back = decodeEvent(row({ metadata: '[1,2]' }));
      expect(back.metadata).to.deep.equal({});
      expect(malformedProblems(back)).to.deep.equal(['metadata was array, not an object']);
      expectThrows(() => decodeEvent(row({ metadata: 'nope' })), CorruptedRecordError, 'metadata is not JSON');
      expect(malformedProblems(decodeEvent(row({ metadata: null })))).to.deep.equal([]);
    });

    it('turns a numeric id or session id into a string', function () {
      const back = decodeEvent(row({ id: 7, sessionId: 8 }));
      expect([back.id, back.sessionId]).to.deep.equal(['7', '8']);
    });
  });

  it('escapeLike escapes the LIKE wildcards and the escape character itself', function () {
    expect(escapeLike('100%_a\\b')).to.equal('100\\%\\_a\\\\b');
    expect(escapeLike('plain')).to.equal('plain');
  });
});
