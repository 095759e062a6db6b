// Runs a test process against inversify 7 (installed as the devDependency alias 'inversify7') instead of the
// default major: NODE_OPTIONS='--import ./test/support/inversify7.mjs' npx mocha test/di
// Both loaders are redirected: mocha loads the .ts test files through tsx's CommonJS path.
import Module, { register } from 'node:module';

register(
  'data:text/javascript,' +
    encodeURIComponent("export async function resolve(s, c, next) { return next(s === 'inversify' ? 'inversify7' : s, c); }"),
  import.meta.url,
);

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return resolveFilename.call(this, request === 'inversify' ? 'inversify7' : request, ...rest);
};
