import { expect } from 'chai';
import { InvalidArgumentError } from 'session-compaction';
import { describeLocation, parseRepositoryUrl } from '../../cli/src/openRepository.js';

describe('cli: repository URLs', function () {
  it('reads sqlite: paths, with or without //, and a bare .db path', function () {
    expect(parseRepositoryUrl('sqlite:./data/sessions.db')).to.deep.equal({ backend: 'sqlite', target: './data/sessions.db' });
    expect(parseRepositoryUrl('sqlite:///var/lib/app.db')).to.deep.equal({ backend: 'sqlite', target: '/var/lib/app.db' });
    expect(parseRepositoryUrl('sqlite::memory:')).to.deep.equal({ backend: 'sqlite', target: ':memory:' });
    expect(parseRepositoryUrl('/tmp/x.sqlite3')).to.deep.equal({ backend: 'sqlite', target: '/tmp/x.sqlite3' });
  });

  it('takes the prefix from a ?prefix= parameter and keeps it away from the driver', function () {
    expect(parseRepositoryUrl('sqlite:app.db?prefix=tenant_a')).to.deep.equal({
      backend: 'sqlite',
      target: 'app.db',
      prefix: 'tenant_a',
    });
    const pg = parseRepositoryUrl('postgres://u:secret@db:5432/app?sslmode=require&prefix=sc');
    expect(pg).to.deep.equal({ backend: 'postgres', target: 'postgres://u:secret@db:5432/app?sslmode=require', prefix: 'sc' });
    expect(parseRepositoryUrl('rediss://cache:6380/2?prefix=x')).to.deep.equal({
      backend: 'redis',
      target: 'rediss://cache:6380/2',
      prefix: 'x',
    });
  });

  it('masks the password when describing a server URL', function () {
    expect(describeLocation(parseRepositoryUrl('postgresql://u:secret@db/app?prefix=p'))).to.equal(
      'postgres postgresql://u:***@db/app (prefix p)',
    );
  });

  it('rejects an empty URL and an unknown scheme', function () {
    expect(() => parseRepositoryUrl('')).to.throw(InvalidArgumentError, '--url must not be empty');
    expect(() => parseRepositoryUrl('mysql://x/y')).to.throw(InvalidArgumentError, 'unsupported --url');
    expect(() => parseRepositoryUrl('sqlite:?prefix=a')).to.throw(InvalidArgumentError, 'names no SQLite file');
  });
});
