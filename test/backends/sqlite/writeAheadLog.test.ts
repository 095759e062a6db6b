import { expect } from 'chai';
import { useWriteAheadLog } from '../../../src/backends/sqlite/writeAheadLog.js';

/** A connection whose journal-mode switch is refused as busy `busyTimes` times (a lock another process holds). */
function connection(busyTimes: number, mode = 'delete') {
  const calls: string[] = [];
  let refusals = busyTimes;
  return {
    calls,
    pragma(source: string) {
      calls.push(source);
      if (source === 'journal_mode') return mode;
      if (refusals-- > 0) throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
      mode = 'wal';
      return [{ journal_mode: 'wal' }];
    },
  };
}

describe('useWriteAheadLog', function () {
  it('retries a switch refused as busy until it succeeds (processes opening one new file together)', function () {
    const db = connection(3);
    useWriteAheadLog(db as never, 1000);
    expect(db.calls.filter((c) => c === 'journal_mode = WAL')).to.have.length(4);
  });

  it('gives up with the busy error once the busy timeout has passed', function () {
    const db = connection(Number.POSITIVE_INFINITY);
    const start = Date.now();
    expect(() => useWriteAheadLog(db as never, 50)).to.throw('database is locked');
    expect(Date.now() - start).to.be.at.least(50);
  });

  it('only reads the mode of a file already in WAL (no lock needed)', function () {
    const db = connection(Number.POSITIVE_INFINITY, 'wal');
    useWriteAheadLog(db as never, 0);
    expect(db.calls).to.deep.equal(['journal_mode']);
  });

  it('does not retry another error', function () {
    const db = {
      calls: 0,
      pragma() {
        db.calls++;
        throw Object.assign(new Error('file is not a database'), { code: 'SQLITE_NOTADB' });
      },
    };
    expect(() => useWriteAheadLog(db as never, 1000)).to.throw('file is not a database');
    expect(db.calls).to.equal(1);
  });
});
