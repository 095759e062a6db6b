import { expect } from 'chai';
import { InvalidArgumentError, Messages, SessionEvent, type Message } from 'session-compaction';
import { expectThrows } from '../support/fixtures.js';

const base = { sessionId: 's-1', message: Messages.user('hi') };

describe('SessionEvent', function () {
  it('defaults: random UUID id, now, empty frozen metadata, root branch, not archived', function () {
    const before = Date.now();
    const e = SessionEvent.create(base);
    expect(e.id).to.match(/^[0-9a-f-]{36}$/);
    expect(e.timestamp.getTime()).to.be.within(before, Date.now());
    expect(e.metadata).to.deep.equal({});
    expect(e.branch).to.equal(null);
    expect(e.isRootEvent()).to.equal(true);
    expect(e.isArchived()).to.equal(false);
    expect(SessionEvent.create(base).id).to.not.equal(e.id);
  });

  it('validation: "id must not be null or empty", "sessionId must not be null or empty", "message must not be null"', function () {
    expectThrows(() => SessionEvent.create({ ...base, id: '' }), InvalidArgumentError, 'id must not be null or empty');
    expectThrows(() => SessionEvent.create({ ...base, id: '  ' }), InvalidArgumentError, 'id must not be null or empty');
    expectThrows(
      () => SessionEvent.create({ ...base, id: null as unknown as string }),
      InvalidArgumentError,
      'id must not be null or empty',
    );
    expectThrows(
      () => SessionEvent.create({ ...base, sessionId: '' }),
      InvalidArgumentError,
      'sessionId must not be null or empty',
    );
    expectThrows(
      () => SessionEvent.create({ ...base, sessionId: undefined as unknown as string }),
      InvalidArgumentError,
      'sessionId must not be null or empty',
    );
    expectThrows(
      () => SessionEvent.create({ ...base, message: null as unknown as Message }),
      InvalidArgumentError,
      'message must not be null',
    );
  });

  it('is deeply immutable: the event, its metadata, message and tool calls are frozen', function () {
    const metadata: Record<string, unknown> = { k: 'v' };
    const calls = [Messages.toolCall('c1', 'f', '{}')];
    const e = SessionEvent.create({ ...base, message: Messages.assistant(null, { toolCalls: calls }), metadata });
    expect(Object.isFrozen(e)).to.equal(true);
    expect(Object.isFrozen(e.metadata)).to.equal(true);
    expect(Object.isFrozen(e.message)).to.equal(true);
    expect(e.message.type === 'assistant' && Object.isFrozen(e.message.toolCalls)).to.equal(true);
    metadata.k = 'changed';
    calls[0]!.name = 'changed';
    expect(e.metadata.k).to.equal('v');
    expect(e.message.type === 'assistant' && e.message.toolCalls?.[0]?.name).to.equal('f');
    expect(() => {
      (e as unknown as { id: string }).id = 'x';
    }).to.throw(TypeError);
  });

  it('a caller mutating the Date it passed cannot change the event', function () {
    const ts = new Date('2024-01-01T00:00:00Z');
    const e = SessionEvent.create({ ...base, timestamp: ts });
    ts.setFullYear(1999);
    expect(e.timestamp.toISOString()).to.equal('2024-01-01T00:00:00.000Z');
  });

  it('equals compares (id, sessionId) only; an archived copy equals its original', function () {
    const e = SessionEvent.create({ ...base, id: 'e1' });
    expect(e.equals(SessionEvent.create({ sessionId: 's-1', id: 'e1', message: Messages.assistant('other') }))).to.equal(true);
    expect(e.equals(SessionEvent.create({ ...base, id: 'e1', sessionId: 's-2' }))).to.equal(false);
    expect(e.equals(SessionEvent.create({ ...base, id: 'e2' }))).to.equal(false);
    expect(e.equals(e.asArchived())).to.equal(true);
    expect(e.equals({ id: 'e1', sessionId: 's-1' })).to.equal(false);
  });

  it('asArchived returns an archived copy, and the same instance when already archived', function () {
    const e = SessionEvent.create(base);
    const archived = e.asArchived();
    expect(archived).to.not.equal(e);
    expect(archived.isArchived()).to.equal(true);
    expect(e.isArchived()).to.equal(false);
    expect(archived.asArchived()).to.equal(archived);
  });

  it('isSynthetic is true only for metadata.synthetic === true', function () {
    expect(SessionEvent.create({ ...base, metadata: { synthetic: true } }).isSynthetic()).to.equal(true);
    expect(SessionEvent.create({ ...base, metadata: { synthetic: 'true' } }).isSynthetic()).to.equal(false);
    expect(SessionEvent.create(base).isSynthetic()).to.equal(false);
    expect(SessionEvent.METADATA_SYNTHETIC).to.equal('synthetic');
    expect(SessionEvent.METADATA_COMPACTION_SOURCE).to.equal('compactionSource');
  });

  it('messageType, hasToolCalls, text and isRootEvent follow the message and branch', function () {
    const tc = SessionEvent.create({
      ...base,
      message: Messages.assistant(null, { toolCalls: [Messages.toolCall('c', 'f', '{}')] }),
      branch: 'orch',
    });
    expect(tc.messageType).to.equal('assistant');
    expect(tc.hasToolCalls()).to.equal(true);
    expect(tc.isRootEvent()).to.equal(false);
    expect(tc.text).to.equal(null);
    expect(SessionEvent.create(base).hasToolCalls()).to.equal(false);
    expect(SessionEvent.create({ ...base, message: Messages.tool([Messages.toolResponse('c', 'f', 'r')]) }).text).to.equal(null);
  });
});

describe('SessionEvent.create: missing and invalid fields', function () {
  type Init = Parameters<typeof SessionEvent.create>[0];
  const create = (init: unknown) => SessionEvent.create(init as Init);

  it('rejects a missing init or one that is not an object', function () {
    for (const init of [null, undefined]) expectThrows(() => create(init), InvalidArgumentError, 'event must not be null');
    expectThrows(() => create('hi'), InvalidArgumentError, 'event must be an object (got string)');
  });

  it('names the field that is invalid: timestamp, metadata, branch, archived', function () {
    expectThrows(
      () => create({ ...base, timestamp: 'now' }),
      InvalidArgumentError,
      'timestamp must be a valid Date (got string)',
    );
    expectThrows(() => create({ ...base, metadata: [1] }), InvalidArgumentError, 'metadata must be a plain object (got array)');
    expectThrows(() => create({ ...base, branch: 7 }), InvalidArgumentError, 'branch must be a string or null (got number)');
    expectThrows(() => create({ ...base, branch: 'a\u0000b' }), InvalidArgumentError, 'branch');
    expectThrows(() => create({ ...base, archived: 'yes' }), InvalidArgumentError, 'archived must be a boolean (got string)');
  });

  it('a null branch is the root, as a missing one', function () {
    expect(create({ ...base, branch: null }).isRootEvent()).to.equal(true);
    expect(create({ ...base, branch: 'orch.sub' }).branch).to.equal('orch.sub');
  });

  it('is pinned only when metadata.pinned is true', function () {
    expect(SessionEvent.METADATA_PINNED).to.equal('pinned');
    expect(create({ ...base, metadata: { pinned: true } }).isPinned()).to.equal(true);
    expect(create({ ...base, metadata: { pinned: 'true' } }).isPinned()).to.equal(false);
    expect(create(base).isPinned()).to.equal(false);
  });
});
