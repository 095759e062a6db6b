#!/usr/bin/env node
// Development entry (`npm run bench` runs it through tsx); the published "bin" is the built dist/bench/cli.js.
import { main } from '../src/bench/cli.js';

await main(process.argv);
