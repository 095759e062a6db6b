import { expect } from 'chai';
import { snapToTurnStart } from 'session-compaction';
import { A, SU, TC, TR, U } from '../support/fixtures.js';

describe('snapToTurnStart', function () {
  it('23: [u1, a1, u2, a2] — a cut on a turn start stays, a cut inside a turn moves to the next one or the end', function () {
    const real = [U('u1'), A('a1'), U('u2'), A('a2')];
    expect([0, 2, 1, 3].map((c) => snapToTurnStart(real, c))).to.deep.equal([0, 2, 2, 4]);
  });

  it('24: [u1, a1] — snap(0)=0 and snap(2)=2 (the end stays the end)', function () {
    const real = [U('u1'), A('a1')];
    expect(snapToTurnStart(real, 0)).to.equal(0);
    expect(snapToTurnStart(real, 2)).to.equal(2);
  });

  it('25: without any user event every cut moves to the end', function () {
    const real = [A('a1'), A('a2'), A('a3')];
    expect(snapToTurnStart(real, 0)).to.equal(3);
    expect(snapToTurnStart(real, 1)).to.equal(3);
  });

  it('26: a cut inside a multi-step turn moves past all of it', function () {
    const real = [U('u1'), A('a1'), A('a2'), U('u2'), A('a3')];
    expect(snapToTurnStart(real, 1)).to.equal(3);
    expect(snapToTurnStart(real, 2)).to.equal(3);
  });

  it('27: an empty list snaps 0 to 0', function () {
    expect(snapToTurnStart([], 0)).to.equal(0);
  });

  it('28: a branch user event is turn-internal and skipped', function () {
    const real = [U('u1'), A('a1'), U('u2', 'sub'), A('a2', 'sub'), U('u3')];
    expect(snapToTurnStart(real, 2)).to.equal(4);
  });

  it('29: branch tool calls and results are skipped with the branch user event', function () {
    const real = [U('u1'), A('a1'), U('u2', 'sub'), TC('sub'), TR('sub'), A('a3', 'sub'), U('u3')];
    expect(snapToTurnStart(real, 4)).to.equal(6);
    expect(snapToTurnStart(real, 2)).to.equal(6);
  });

  it('30: peer branch conversations before the first root user are skipped', function () {
    const real = [U('u1', 'peer1'), A('a1', 'peer1'), U('u2', 'peer2'), A('a2', 'peer2'), U('u3')];
    expect(snapToTurnStart(real, 0)).to.equal(4);
  });

  it('31: a branch-only list snaps to its end', function () {
    expect(snapToTurnStart([U('u1', 'sub'), A('a1', 'sub')], 0)).to.equal(2);
  });

  it('never moves backwards and treats a synthetic user event as no turn start', function () {
    const real = [U('u1'), A('a1'), U('u2')];
    expect(snapToTurnStart(real, 3)).to.equal(3);
    expect(snapToTurnStart([SU(), A('a'), U('u')], 0)).to.equal(2);
  });
});
