#!/usr/bin/env node
// Development entry (`npm run bench` runs it through tsx); the published "bin" is the built dist/cli/main.js.
import { main } from '../src/cli/main.js';

await main(process.argv);
