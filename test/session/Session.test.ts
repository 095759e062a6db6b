import { expect } from 'chai';
import { DefaultSessionService, InMemorySessionRepository, InvalidArgumentError, Session } from 'session-compaction';
import { DEFAULT_TIME_TO_LIVE_MS, type SessionInit } from 'session-compaction/spi';
import { expectRejects, expectThrows } from '../support/fixtures.js';

describe('Session and CreateSessionRequest', function () {
  it('Session.create defaults expiresAt to createdAt + 60 days and keeps an explicit null', function () {
    const createdAt = new Date('2025-03-01T00:00:00Z');
    const s = Session.create({ id: 's', userId: 'u', createdAt });
    expect(s.expiresAt!.getTime()).to.equal(createdAt.getTime() + 60 * 24 * 60 * 60 * 1000);
    expect(DEFAULT_TIME_TO_LIVE_MS).to.equal(60 * 24 * 60 * 60 * 1000);
    expect(Session.create({ id: 's', userId: 'u', expiresAt: null }).expiresAt).to.equal(null);
  });

  it('Session.create validates id and userId', function () {
    expectThrows(() => Session.create({ id: '', userId: 'u' }), InvalidArgumentError, 'id must not be null or empty');
    expectThrows(() => Session.create({ id: 's', userId: ' ' }), InvalidArgumentError, 'userId must not be null or empty');
    expectThrows(
      () => Session.create({ id: null as unknown as string, userId: 'u' }),
      InvalidArgumentError,
      'id must not be null or empty',
    );
  });

  it('a session is immutable and copies its metadata and dates', function () {
    const metadata: Record<string, unknown> = { plan: 'pro' };
    const createdAt = new Date('2025-03-01T00:00:00Z');
    const s = Session.create({ id: 's', userId: 'u', metadata, createdAt });
    metadata.plan = 'free';
    createdAt.setFullYear(2000);
    expect(s.metadata.plan).to.equal('pro');
    expect(s.createdAt.getUTCFullYear()).to.equal(2025);
    expect(Object.isFrozen(s)).to.equal(true);
    expect(Object.isFrozen(s.metadata)).to.equal(true);
  });

  it('Session.from accepts any session-shaped object', function () {
    const s = Session.from({ id: 'x', userId: 'u', createdAt: new Date(0), expiresAt: null, metadata: { a: 1 } });
    expect(s).to.be.instanceOf(Session);
    expect(s.metadata).to.deep.equal({ a: 1 });
  });

  it('CreateSessionRequest: a blank or missing userId is rejected', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository());
    await expectRejects(service.create({ userId: '' }), InvalidArgumentError, 'userId must not be null or empty');
    await expectRejects(service.create({} as { userId: string }), InvalidArgumentError, 'userId must not be null or empty');
    await expectRejects(service.create(null as unknown as { userId: string }), InvalidArgumentError);
  });

  it('CreateSessionRequest: metadata is stored and a non-finite TTL is rejected', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository());
    const s = await service.create({ userId: 'u', metadata: { source: 'web' } });
    expect((await service.findById(s.id))?.metadata).to.deep.equal({ source: 'web' });
    await expectRejects(service.create({ userId: 'u', timeToLiveMs: Number.NaN }), InvalidArgumentError, 'timeToLiveMs');
  });
});

describe('Session.create and Session.from: missing and invalid fields', function () {
  it('rejects a missing init or one that is not an object', function () {
    for (const init of [null, undefined]) {
      expectThrows(() => Session.create(init as unknown as SessionInit), InvalidArgumentError, 'session must not be null');
    }
    expectThrows(
      () => Session.create('s' as unknown as SessionInit),
      InvalidArgumentError,
      'session must be an object (got string)',
    );
  });

  it('a null or missing createdAt is now', function () {
    for (const createdAt of [null, undefined]) {
      const before = Date.now();
      const s = Session.create({ id: 's', userId: 'u', createdAt: createdAt as unknown as Date });
      expect(s.createdAt.getTime()).to.be.within(before, Date.now());
    }
  });

  it('names the field whose date or metadata is invalid', function () {
    expectThrows(
      () => Session.create({ id: 's', userId: 'u', createdAt: 'yesterday' as unknown as Date }),
      InvalidArgumentError,
      'createdAt must be a valid Date',
    );
    expectThrows(
      () => Session.create({ id: 's', userId: 'u', expiresAt: new Date(Number.NaN) }),
      InvalidArgumentError,
      'expiresAt must be a valid Date',
    );
    expectThrows(
      () => Session.create({ id: 's', userId: 'u', metadata: 'plan=pro' as unknown as Record<string, unknown> }),
      InvalidArgumentError,
      'metadata must be a plain object',
    );
  });

  it('session metadata follows the identifier rule: no unpaired surrogate in its strings', function () {
    expectThrows(
      () => Session.create({ id: 's', userId: 'u', metadata: { note: 'half \uD800 a pair' } }),
      InvalidArgumentError,
      'metadata.note',
    );
  });

  it('keeps an explicit expiresAt', function () {
    const expiresAt = new Date('2030-01-01T00:00:00Z');
    expect(Session.create({ id: 's', userId: 'u', expiresAt }).expiresAt!.toISOString()).to.equal(expiresAt.toISOString());
  });

  it('says when the default time to live runs past the last supported date', function () {
    expectThrows(
      () => Session.create({ id: 's', userId: 'u', createdAt: new Date('+275760-09-01T00:00:00Z') }),
      InvalidArgumentError,
      'the default time to live of',
    );
  });

  it('from returns a Session as it is and rejects a missing one', function () {
    const s = Session.create({ id: 's', userId: 'u' });
    expect(Session.from(s)).to.equal(s);
    for (const like of [null, undefined]) {
      expectThrows(() => Session.from(like as unknown as Session), InvalidArgumentError, 'session must not be null');
    }
  });

  it('with changes some fields and keeps the others, metadata included', function () {
    const s = Session.create({ id: 's', userId: 'u', metadata: { plan: 'pro' } });
    const changed = s.with({ expiresAt: null });
    expect(changed.expiresAt).to.equal(null);
    expect(changed.id).to.equal('s');
    expect(changed.userId).to.equal('u');
    expect(changed.metadata).to.deep.equal({ plan: 'pro' });
    expect(changed.createdAt.getTime()).to.equal(s.createdAt.getTime());
  });
});
