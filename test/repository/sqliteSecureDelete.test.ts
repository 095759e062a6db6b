import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { DefaultSessionService, Messages, SqliteSessionRepository } from '../../src/index.js';
import { createDefaultLogger } from '../../src/logging.js';

const logger = createDefaultLogger({ level: 'error' });
const SECRET = 'Zq7Passphrase 0xdeadbeefcafe';

/** How often the text (or its lower-cased last word, as the full-text index stores it) occurs in the file and its WAL. */
function occurrences(path: string, text: string): number {
  let n = 0;
  for (const file of [path, `${path}-wal`]) {
    if (!existsSync(file)) continue;
    const bytes = readFileSync(file).toString('latin1');
    n += bytes.split(text).length - 1;
  }
  return n;
}

describe('SqliteSessionRepository secureDelete', function () {
  const dir = mkdtempSync(join(tmpdir(), 'secure-delete-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;

  async function seeded(secureDelete: boolean) {
    const path = join(dir, `db-${n++}.db`);
    const repository = new SqliteSessionRepository({ path, secureDelete, logger });
    const service = new DefaultSessionService(repository, { logger });
    for (let i = 0; i < 10; i++) {
      const s = await service.create({ userId: `user-${i}` });
      for (let j = 0; j < 10; j++) await service.appendMessage(s.id, Messages.user(`filler ${i}-${j} about the weather`));
    }
    const victim = await service.create({ userId: 'alice' });
    await service.appendMessage(victim.id, Messages.user(`my passphrase is ${SECRET}`), { id: 'secret' });
    await service.appendMessage(victim.id, Messages.assistant('Noted.'));
    expect(occurrences(path, SECRET)).to.be.greaterThan(0);
    return { path, repository, service, victim: victim.id };
  }

  it('after delete, neither the text nor its full-text index words are left in the file or its WAL', async function () {
    const { path, repository, service, victim } = await seeded(true);
    await service.delete(victim);
    expect(occurrences(path, SECRET)).to.equal(0);
    expect(occurrences(path, '0xdeadbeefcafe')).to.equal(0);
    expect(occurrences(path, 'zq7passphrase')).to.equal(0);
    await repository.close();
  });

  it('after a redaction, the redacted text is gone from the file and its WAL', async function () {
    const { path, repository, service, victim } = await seeded(true);
    await service.redactEvent(victim, 'secret', { reason: 'test' });
    expect(occurrences(path, SECRET)).to.equal(0);
    expect(occurrences(path, '0xdeadbeefcafe')).to.equal(0);
    expect((await service.getEvents(victim)).map((e) => e.text)).to.deep.equal(['[redacted]', 'Noted.']);
    await repository.close();
  });

  it('control: without secureDelete the full-text index still holds the erased words after delete', async function () {
    const { path, repository, service, victim } = await seeded(false);
    await service.delete(victim);
    expect(occurrences(path, '0xdeadbeefcafe')).to.be.greaterThan(0);
    await repository.close();
  });

  it('rejects a secureDelete that is not a boolean', function () {
    expect(() => new SqliteSessionRepository({ path: ':memory:', secureDelete: 'yes' as unknown as boolean })).to.throw(
      'secureDelete must be a boolean',
    );
  });
});
