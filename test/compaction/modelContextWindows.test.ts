import { expect } from 'chai';
import { InvalidArgumentError, contextWindowOf, registerModelContextWindows } from 'session-compaction';
import { clearRegisteredModelContextWindows } from '../../src/compaction/modelContextWindows.js';
import { expectThrows } from '../support/fixtures.js';

describe('model context windows: looking a model up', function () {
  afterEach(() => clearRegisteredModelContextWindows());

  it('a suffix after "-", ":" or "@" resolves to its listed prefix; any other suffix does not', function () {
    expect(contextWindowOf('gpt-4-0613')).to.equal(8_192);
    expect(contextWindowOf('gpt-4:latest')).to.equal(8_192);
    expect(contextWindowOf('gpt-4@2024')).to.equal(8_192);
    expectThrows(() => contextWindowOf('gpt-4x'), InvalidArgumentError, 'Unknown model "gpt-4x"');
  });

  it('the longest listed prefix wins, whatever the order of the table', function () {
    expect(contextWindowOf('gpt-4-32k-0613')).to.equal(32_768);
    registerModelContextWindows({ 'acme-large': 2000, acme: 1000 });
    expect(contextWindowOf('acme-large-v2')).to.equal(2000);
    expect(contextWindowOf('acme-small')).to.equal(1000);
  });

  it('ignores a provider prefix, case and surrounding blanks', function () {
    expect(contextWindowOf('  OpenRouter/OpenAI/GPT-4  ')).to.equal(8_192);
    expect(contextWindowOf('/gpt-4')).to.equal(8_192);
  });

  it("an exact entry in any table wins over a prefix; among exact entries the call's own table comes first", function () {
    registerModelContextWindows({ 'acme-pro': 3000 });
    expect(contextWindowOf('acme-pro', { acme: 500 })).to.equal(3000);
    expect(contextWindowOf('Acme-Pro', { 'ACME-PRO': 700 })).to.equal(700);
  });

  it('an unknown model names the normalised key in the ways to add it', function () {
    const error = expectThrows(() => contextWindowOf('Vendor/My-Model'), InvalidArgumentError, 'Unknown model "Vendor/My-Model"');
    expect(error.message).to.contain('registerModelContextWindows({ "my-model": <tokens> })');
    expect(error.message).to.contain('contextWindows: { "my-model": <tokens> }');
  });

  it('refuses a missing table and a blank model name', function () {
    expectThrows(
      () => registerModelContextWindows(null as unknown as Record<string, number>),
      InvalidArgumentError,
      'windows must not be null',
    );
    expectThrows(() => registerModelContextWindows(5 as never), InvalidArgumentError, 'windows must not be null');
    expectThrows(() => registerModelContextWindows({ ' ': 10 }), InvalidArgumentError, 'model must not be null or empty');
    expectThrows(() => contextWindowOf(''), InvalidArgumentError, 'model must not be null or empty');
  });
});
