import { expect } from 'chai';
import { TextTokenMemo } from '../../src/tokens/TextTokenMemo.js';
import type { TokenCountEstimator } from '../../src/tokens/TokenCountEstimator.js';

const estimator = (): TokenCountEstimator => ({ estimate: (text: string) => text.length });

describe('TextTokenMemo', function () {
  it('keeps a count per estimator: another estimator does not see it', function () {
    const memo = new TextTokenMemo({ entries: 10, chars: 100 });
    const a = estimator();
    expect(memo.set(a, 'hello', 7)).to.equal(7);
    expect(memo.get(a, 'hello')).to.equal(7);
    expect(memo.get(estimator(), 'hello')).to.equal(undefined);
  });

  it('starts over when a new text would pass the entry bound', function () {
    const memo = new TextTokenMemo({ entries: 2, chars: 100 });
    const a = estimator();
    memo.set(a, 'one', 1);
    memo.set(a, 'two', 2);
    memo.set(a, 'three', 3);
    expect([memo.get(a, 'one'), memo.get(a, 'two'), memo.get(a, 'three')]).to.deep.equal([undefined, undefined, 3]);
  });

  it('starts over when a new text would pass the character bound', function () {
    const memo = new TextTokenMemo({ entries: 100, chars: 8 });
    const a = estimator();
    memo.set(a, 'abcd', 1);
    memo.set(a, 'efgh', 2);
    memo.set(a, 'i', 3);
    expect([memo.get(a, 'abcd'), memo.get(a, 'efgh'), memo.get(a, 'i')]).to.deep.equal([undefined, undefined, 3]);
  });
});
