// The transformers subpath resolves from the tarball and, with transformers.js not installed (an optional peer),
// imports cleanly and names the package to install on first use instead of failing at import.
import { localEmbeddings } from 'session-compaction/transformers';
const expected =
  "localEmbeddings needs the optional package '@huggingface/transformers', which is not installed: run npm install @huggingface/transformers";
const outcome = await localEmbeddings({ modelPath: './no-model' })(['text']).then(
  () => 'resolved',
  (error) => error.message,
);
if (outcome !== expected) {
  console.error(`pack smoke test failed: session-compaction/transformers without transformers.js: ${outcome}`);
  process.exit(1);
}
console.log('pack smoke test: session-compaction/transformers without its optional peer — ok');
