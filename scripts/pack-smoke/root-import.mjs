// Importing the root must load no database driver nor the OpenAI SDK or transformers.js (they load when first used).
import { createRequire } from 'node:module';
await import('session-compaction');
const loaded = Object.keys(createRequire(import.meta.url).cache);
const drivers = ['better-sqlite3', 'pg', 'ioredis', 'openai', '@huggingface/transformers'].filter((name) =>
  loaded.some((file) => file.includes(`/node_modules/${name}/`)),
);
if (drivers.length > 0) {
  console.error(`pack smoke test failed: importing the root loaded ${drivers.join(', ')}`);
  process.exit(1);
}
console.log('pack smoke test: the root import loads no driver — ok');
