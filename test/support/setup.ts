// Loaded before every test file (see .mocharc.json): property tests are reproducible run to run.
// Set FC_SEED to explore other seeds; a failure prints the seed and path to replay it.
import fc from 'fast-check';

fc.configureGlobal({ seed: Number(process.env.FC_SEED ?? 20261122) });
