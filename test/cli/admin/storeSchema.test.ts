import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IllegalStateError, InvalidArgumentError } from 'session-compaction';
import { SqliteSessionRepository } from 'session-compaction/sqlite';
import { explainSchemaError } from '../../../cli/src/admin/storeSchema.js';
import { migrateCommandFor, parseRepositoryUrl } from '../../../cli/src/openRepository.js';

describe('cli: schema errors', function () {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'cli-schema-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("the library's refusal of an unmigrated store names the command to run instead of the API's options", async function () {
    const path = join(dir, 'unmigrated.db');
    const repository = new SqliteSessionRepository({ path, initializeSchema: false });
    let refusal: unknown;
    try {
      await repository.findById('x');
    } catch (error) {
      refusal = error;
    } finally {
      await repository.close();
    }
    expect(refusal).to.be.instanceOf(IllegalStateError);
    expect((refusal as Error).message).to.include('initializeSchema: true');
    const location = parseRepositoryUrl(`sqlite:${path}?prefix=tenant`);
    const explained = explainSchemaError(refusal, null, location) as IllegalStateError;
    expect(explained).to.be.instanceOf(IllegalStateError);
    expect(explained.message).to.not.include('initializeSchema').and.not.include('migrate()');
    expect(explained.message).to.match(
      /is missing or outdated in .*: run `session-compaction migrate --url sqlite:.*unmigrated\.db --prefix tenant`$/,
    );
    expect(explained.cause).to.equal(refusal);
  });

  it('any other error is left as it is', function () {
    const other = new InvalidArgumentError('sessionId must not be null or empty');
    expect(explainSchemaError(other, null, parseRepositoryUrl('sqlite:x.db'))).to.equal(other);
  });

  it('the migrate command masks a server password', function () {
    expect(migrateCommandFor(parseRepositoryUrl('postgres://app:secret@db:5432/app?prefix=sc'))).to.equal(
      'session-compaction migrate --url postgres://app:***@db:5432/app --prefix sc',
    );
  });
});
