import { expect } from 'chai';
import fc from 'fast-check';
import {
  DefaultSessionService,
  InMemorySessionRepository,
  InvalidArgumentError,
  Session,
  createDefaultLogger,
} from 'session-compaction';
import {
  describeType,
  requireDate,
  requireInteger,
  requireJsonObject,
  requireOffsetDate,
  textProblem,
} from '../../src/validation/inputs.js';

const logger = createDefaultLogger({ silent: true });

describe('validation/inputs', function () {
  it('describeType names what JSON and JavaScript callers actually send', function () {
    const cases: Array<[unknown, string]> = [
      [null, 'null'],
      [undefined, 'undefined'],
      [[], 'array'],
      [{}, 'object'],
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      [Number.NEGATIVE_INFINITY, '-Infinity'],
      [1.5, 'number'],
      ['5', 'string'],
      [new Date('x'), 'Invalid Date'],
      [new Date(0), 'Date'],
      [new Map(), 'Map'],
      [1n, 'bigint'],
      [Object.create(null), 'object'],
    ];
    for (const [value, name] of cases) expect(describeType(value), String(name)).to.equal(name);
  });

  it('textProblem finds NUL and unpaired surrogates and accepts every well-formed string', function () {
    expect(textProblem('a\u0000b')).to.equal('a NUL character (U+0000) at index 1');
    expect(textProblem('x\uD83D')).to.equal('an unpaired surrogate (U+D83D) at index 1');
    expect(textProblem('\uDE00😀')).to.equal('an unpaired surrogate (U+DE00) at index 0');
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
        const wellFormed = !s.includes('\u0000') && !loneSurrogate.test(s);
        expect(textProblem(s) === null).to.equal(wellFormed);
      }),
    );
  });

  it('dates must be valid and inside years 1 to 275760, the range every backend stores', function () {
    expect(() => requireDate(new Date('nope'), 'at')).to.throw(
      InvalidArgumentError,
      'at must be a valid Date (got Invalid Date)',
    );
    expect(() => requireDate('2025-01-01', 'at')).to.throw(InvalidArgumentError, 'at must be a valid Date (got string)');
    expect(() => requireDate(new Date('-000001-01-01T00:00:00Z'), 'at')).to.throw(InvalidArgumentError, 'between year 1');
    expect(requireDate(new Date(8.64e15), 'at').getTime()).to.equal(8.64e15);
    expect(() => requireOffsetDate(new Date(0), 1e20, 'timeToLiveMs')).to.throw(
      InvalidArgumentError,
      'timeToLiveMs of 100000000000000000000 ms puts the date outside',
    );
  });

  it('integers refuse NaN, -1 below the minimum, 0.5, ±Infinity and numeric strings', function () {
    for (const bad of [Number.NaN, -1, 0.5, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '5']) {
      expect(() => requireInteger(bad, 'n', 0, 10), String(bad)).to.throw(InvalidArgumentError, 'n must be');
    }
    expect(requireInteger(0, 'n', 0, 10)).to.equal(0);
  });

  it('JSON objects are copied as JSON would store them, and non-JSON is refused with its path', function () {
    const input = { a: [1, { b: undefined, c: -0 }], d: undefined };
    const copy = requireJsonObject(input, 'm');
    expect(copy).to.deep.equal({ a: [1, { c: 0 }] });
    expect(copy.a).to.not.equal(input.a);
    expect(() => requireJsonObject({ a: [undefined] }, 'm')).to.throw(
      InvalidArgumentError,
      'm.a[0] must be a JSON value (got undefined)',
    );
    expect(() => requireJsonObject({ a: new Map() }, 'm')).to.throw(InvalidArgumentError, 'm.a must be a JSON value (got Map)');
    expect(() => requireJsonObject({ k: 'x\u0000' }, 'm', true)).to.throw(InvalidArgumentError, 'm.k must not contain a NUL');
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) deep = { deep };
    expect(() => requireJsonObject(deep, 'm')).to.throw(InvalidArgumentError, 'nests deeper than 64 levels');
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
        expect(JSON.parse(JSON.stringify(requireJsonObject(value, 'm')))).to.deep.equal(requireJsonObject(value, 'm'));
      }),
    );
  });

  it('Session.create refuses an Invalid Date createdAt and expiresAt, and a default expiry past the date range', function () {
    expect(() => Session.create({ id: 's', userId: 'u', createdAt: new Date('x') })).to.throw(
      InvalidArgumentError,
      'createdAt must be a valid Date (got Invalid Date)',
    );
    expect(() => Session.create({ id: 's', userId: 'u', expiresAt: new Date(Number.NaN) })).to.throw(
      InvalidArgumentError,
      'expiresAt',
    );
    expect(() => Session.create({ id: 's', userId: 'u', createdAt: new Date(8.64e15) })).to.throw(
      InvalidArgumentError,
      'the default time to live',
    );
  });

  it('maxRebaseAttempts must be an integer from 0 to 1000', function () {
    const repo = new InMemorySessionRepository();
    for (const bad of [Number.NaN, -1, 0.5, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '5', 1001]) {
      expect(() => new DefaultSessionService(repo, { logger, maxRebaseAttempts: bad as number }), String(bad)).to.throw(
        InvalidArgumentError,
        'maxRebaseAttempts must be',
      );
    }
    expect(() => new DefaultSessionService(repo, { logger, maxRebaseAttempts: 0 })).to.not.throw();
  });
});
