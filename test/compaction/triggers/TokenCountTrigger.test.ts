import { expect } from 'chai';
import { CompactionRequest, InvalidArgumentError, Session, TokenCountTrigger } from 'session-compaction';
import { METADATA_TOKEN_CALIBRATION, type TokenCountTriggerOptions } from 'session-compaction/spi';
import { CharEstimator, U, expectThrows } from '../../support/fixtures.js';

describe('TokenCountTrigger: options and calibration', function () {
  it('rejects missing options with InvalidArgumentError, not a TypeError', function () {
    for (const options of [null, undefined]) {
      expectThrows(
        () => new TokenCountTrigger(options as unknown as TokenCountTriggerOptions),
        InvalidArgumentError,
        'options must not be null',
      );
    }
  });

  it("scales the window's tokens by the session's calibration ratio", function () {
    const trigger = new TokenCountTrigger({ threshold: 100, tokenCountEstimator: new CharEstimator() });
    const session = (ratio: number) =>
      Session.create({ id: 's', userId: 'u', metadata: { [METADATA_TOKEN_CALIBRATION]: { ratio, samples: 4 } } });
    const window = [U('x'.repeat(54))]; // 60 tokens
    expect(trigger.shouldCompact(CompactionRequest.of(session(1), window))).to.equal(false);
    expect(trigger.shouldCompact(CompactionRequest.of(session(2), window))).to.equal(true);
  });
});
