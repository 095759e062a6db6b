import { expect } from 'chai';
import { DefaultSessionService, InMemorySessionRepository, InvalidArgumentError, Session } from 'session-compaction';
import { DEFAULT_TIME_TO_LIVE_MS } from 'session-compaction/spi';
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
