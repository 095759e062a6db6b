import { expect } from 'chai';
import {
  DefaultSessionService,
  InMemorySessionRepository,
  InvalidArgumentError,
  type CreateSessionRequest,
} from 'session-compaction';
import { DEFAULT_TIME_TO_LIVE_MS } from 'session-compaction/spi';
import { expectRejects } from '../support/fixtures.js';

const silent = { error() {}, warn() {}, info() {}, debug() {} };
const service = () => new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
const create = (request: unknown) => service().create(request as CreateSessionRequest);

describe('CreateSessionRequest', function () {
  it('rejects a missing request or one that is not an object', async function () {
    await expectRejects(create(null), InvalidArgumentError, 'request must not be null');
    await expectRejects(create(undefined), InvalidArgumentError, 'request must not be null');
    await expectRejects(create('alice'), InvalidArgumentError, 'request must be an object (got string)');
  });

  it('keeps a given id and gives a blank, null or missing one a random UUID', async function () {
    expect((await create({ userId: 'u', id: 'chosen' })).id).to.equal('chosen');
    for (const id of [' ', null, undefined]) {
      const s = await create({ userId: 'u', id });
      expect(s.id, String(id)).to.match(/^[0-9a-f-]{36}$/);
    }
  });

  it('rejects an id that is not a string, or not storable', async function () {
    await expectRejects(create({ userId: 'u', id: 42 }), InvalidArgumentError, 'id must be a string (got number)');
    await expectRejects(create({ userId: 'u', id: 'a\u0000b' }), InvalidArgumentError, 'id');
  });

  it('applies its own time to live, and the default one when it is null or missing', async function () {
    const own = await create({ userId: 'u', timeToLiveMs: 1000 });
    expect(own.expiresAt!.getTime() - own.createdAt.getTime()).to.equal(1000);
    for (const timeToLiveMs of [null, undefined]) {
      const s = await create({ userId: 'u', timeToLiveMs });
      expect(s.expiresAt!.getTime() - s.createdAt.getTime()).to.equal(DEFAULT_TIME_TO_LIVE_MS);
    }
  });

  it('reads null metadata as none and rejects metadata that is not a plain object of well-formed text', async function () {
    expect((await create({ userId: 'u', metadata: null })).metadata).to.deep.equal({});
    await expectRejects(
      create({ userId: 'u', metadata: ['a'] }),
      InvalidArgumentError,
      'metadata must be a plain object (got array)',
    );
    await expectRejects(create({ userId: 'u', metadata: { note: 'half \uD800 a pair' } }), InvalidArgumentError, 'metadata.note');
  });

  it('accepts allowRecreate true or false', async function () {
    expect((await create({ userId: 'u', id: 'a', allowRecreate: false })).id).to.equal('a');
    expect((await create({ userId: 'u', id: 'b', allowRecreate: true })).id).to.equal('b');
  });

  it('rejects an allowRecreate that is not a boolean, and reads null as not given', async function () {
    await expectRejects(
      create({ userId: 'u', allowRecreate: 'yes' }),
      InvalidArgumentError,
      'allowRecreate must be a boolean (got string)',
    );
    expect((await create({ userId: 'u', id: 'x', allowRecreate: null })).id).to.equal('x');
  });
});
