// Writes a small sentence-embedding model in the layout transformers.js loads from disk (config.json, tokenizer.json,
// tokenizer_config.json, onnx/<name>.onnx), so that `localEmbeddings` is tested on a real ONNX Runtime session and a
// real tokenizer without any pretrained model (this machine reaches the npm registry only, no model hub). The ONNX
// file is encoded here by hand: the protobuf wire format needs ~20 lines, not a dependency.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { mulberry32 } from '../../benchmarks/src/prng.js';

export interface EmbeddingModelSpec {
  /** Each word's vector (all of one length: the model's dimension); words are matched lower-cased. */
  vocab: Record<string, readonly number[]>;
  /**
   * Feed-forward layers after the lookup (x + W2·relu(W1·x)), with seeded random weights: a stand-in with the
   * compute of a small transformer's MLP blocks, for benchmarks. Default none: the output is the looked-up vectors.
   */
  layers?: { count: number; hidden: number; seed?: number };
  /** The ONNX file's name: 'model' (fp32, the default), 'model_quantized' (what dtype q8 reads), … */
  fileName?: string;
}

const PAD = '[PAD]';
const UNK = '[UNK]';

/** Writes the model into `dir` (created if needed) and returns `dir`. [PAD] and [UNK] embed as the zero vector. */
export function writeEmbeddingModel(dir: string, spec: EmbeddingModelSpec): string {
  const words = Object.keys(spec.vocab);
  const dimension = spec.vocab[words[0]!]!.length;
  if (words.some((w) => spec.vocab[w]!.length !== dimension)) throw new Error('every vector must have one length');
  const table = new Float32Array((words.length + 2) * dimension);
  words.forEach((w, i) => table.set(spec.vocab[w]!, (i + 2) * dimension));
  mkdirSync(path.join(dir, 'onnx'), { recursive: true });
  writeFileSync(path.join(dir, 'onnx', `${spec.fileName ?? 'model'}.onnx`), onnxModel(table, dimension, spec.layers));
  const ids: Record<string, number> = { [PAD]: 0, [UNK]: 1 };
  words.forEach((w, i) => (ids[w.toLowerCase()] = i + 2));
  const special = (id: number, content: string) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  writeJson(dir, 'tokenizer.json', {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [special(0, PAD), special(1, UNK)],
    normalizer: { type: 'Lowercase' },
    pre_tokenizer: { type: 'Whitespace' },
    post_processor: null,
    decoder: null,
    model: { type: 'WordLevel', vocab: ids, unk_token: UNK },
  });
  writeJson(dir, 'tokenizer_config.json', {
    tokenizer_class: 'PreTrainedTokenizer',
    pad_token: PAD,
    unk_token: UNK,
    model_max_length: 512,
  });
  // A BERT-type config: transformers.js feeds input_ids and attention_mask (the graph's declared inputs).
  writeJson(dir, 'config.json', { model_type: 'bert', hidden_size: dimension });
  return dir;
}

function writeJson(dir: string, name: string, value: unknown): void {
  writeFileSync(path.join(dir, name), JSON.stringify(value));
}

// ---- ONNX (protobuf wire format: varint and length-delimited fields only) ----

type Bytes = Buffer;
const FLOAT = 1;
const INT64 = 7;

function varint(value: number): Bytes {
  const out: number[] = [];
  let n = value;
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte += 128;
    out.push(byte);
  } while (n > 0);
  return Buffer.from(out);
}
const int = (field: number, value: number): Bytes => Buffer.concat([varint(field * 8), varint(value)]);
const bytes = (field: number, content: Uint8Array): Bytes =>
  Buffer.concat([varint(field * 8 + 2), varint(content.length), content]);
const text = (field: number, value: string): Bytes => bytes(field, Buffer.from(value, 'utf8'));
const message = (field: number, ...parts: Bytes[]): Bytes => bytes(field, Buffer.concat(parts));

/** TensorProto (graph field 5) holding float32 values, little-endian as raw_data. */
function initializer(name: string, dims: number[], values: Float32Array): Bytes {
  const raw = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  return message(5, ...dims.map((d) => int(1, d)), int(2, FLOAT), text(8, name), bytes(9, raw));
}

/** ValueInfoProto: a graph input (field 11) or output (12) with its element type and (symbolic) shape. */
function valueInfo(field: number, name: string, elemType: number, shape: Array<string | number>): Bytes {
  const dims = shape.map((d) => message(1, typeof d === 'number' ? int(1, d) : text(2, d)));
  return message(field, text(1, name), message(2, message(1, int(1, elemType), message(2, ...dims))));
}

function node(op: string, inputs: string[], output: string): Bytes {
  return message(1, ...inputs.map((i) => text(1, i)), text(2, output), text(3, output), text(4, op));
}

function onnxModel(table: Float32Array, dimension: number, layers: EmbeddingModelSpec['layers']): Bytes {
  const rows = table.length / dimension;
  const graph: Bytes[] = [initializer('embeddings', [rows, dimension], table)];
  graph.push(node('Gather', ['embeddings', 'input_ids'], 'x0'));
  let x = 'x0';
  const random = mulberry32(layers?.seed ?? 1); // the same weights on every run
  for (let l = 0; l < (layers?.count ?? 0); l++) {
    const hidden = layers!.hidden;
    const weights = (n: number, fanIn: number) => Float32Array.from({ length: n }, () => (random() * 2 - 1) / Math.sqrt(fanIn));
    graph.push(initializer(`w1_${l}`, [dimension, hidden], weights(dimension * hidden, dimension)));
    graph.push(initializer(`w2_${l}`, [hidden, dimension], weights(hidden * dimension, hidden)));
    graph.push(node('MatMul', [x, `w1_${l}`], `h${l}`));
    graph.push(node('Relu', [`h${l}`], `r${l}`));
    graph.push(node('MatMul', [`r${l}`, `w2_${l}`], `o${l}`));
    graph.push(node('Add', [x, `o${l}`], `x${l + 1}`));
    x = `x${l + 1}`;
  }
  graph.push(node('Identity', [x], 'last_hidden_state'));
  graph.push(text(2, 'tiny-embedding'));
  graph.push(valueInfo(11, 'input_ids', INT64, ['batch', 'sequence']));
  graph.push(valueInfo(11, 'attention_mask', INT64, ['batch', 'sequence']));
  graph.push(valueInfo(12, 'last_hidden_state', FLOAT, ['batch', 'sequence', dimension]));
  // ModelProto: ir_version 8, producer, graph, the default-domain opset 13.
  return Buffer.concat([
    int(1, 8),
    text(2, 'session-compaction tests'),
    message(7, ...graph),
    message(8, text(1, ''), int(2, 13)),
  ]);
}
