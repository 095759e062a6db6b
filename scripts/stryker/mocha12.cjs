// Mocha 12 ships its CLI helpers as .cjs files, and @stryker-mutator/mocha-runner 9 (the last release that
// runs on Node 20: Stryker 10 needs Node 22) requires them without an extension
// (`mocha/lib/cli/run-helpers`, `mocha/lib/cli/options`). CommonJS resolution tries the registered
// extensions in order, so registering `.cjs` (loaded exactly like `.js`) lets those requires find the files.
// Loaded by stryker.config.mjs (Stryker's own process) and through testRunnerNodeArgs (its test workers).
'use strict';
const Module = require('node:module');
if (!Object.prototype.hasOwnProperty.call(Module._extensions, '.cjs')) {
  Module._extensions['.cjs'] = Module._extensions['.js'];
}
