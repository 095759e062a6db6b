// Usage: node --import ./test/support/recordImports.mjs --import tsx <entry>; prints the resolved URLs as JSON at exit.
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
import { createRequire } from 'node:module';

const urls = new Set();
const { port1, port2 } = new MessageChannel();
port1.on('message', (url) => urls.add(url));
port1.unref();
register('./importRecorder.mjs', { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });
process.on('exit', () => {
  const cjs = Object.keys(createRequire(import.meta.url).cache);
  process.stdout.write(`\n@@IMPORTS@@${JSON.stringify([...urls, ...cjs])}\n`);
});
