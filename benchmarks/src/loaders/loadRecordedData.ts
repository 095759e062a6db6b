import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError } from 'session-compaction';
import type { RecordedDataset } from '../recorded/RecordedSession.js';
import { validateRecordedDataset } from '../recorded/validateRecordedDataset.js';
import { loadLocomo, type LocomoLoadOptions } from './loadLocomo.js';
import { loadMiniSweAgent } from './loadMiniSweAgent.js';
import { loadTauBench } from './loadTauBench.js';
import { readJson } from './readJson.js';

export type RecordedSourceName = 'locomo' | 'tau-bench' | 'mini-swe-agent';

export const RECORDED_SOURCES: readonly RecordedSourceName[] = Object.freeze(['locomo', 'tau-bench', 'mini-swe-agent']);

/** Where each source lives in a recorded-data directory (docs/benchmarking.md, 'The recorded sources'). */
const LAYOUT: Readonly<Record<RecordedSourceName, string>> = {
  locomo: 'locomo/locomo10.json',
  'tau-bench': 'tau-bench/gpt-4o-airline.json',
  'mini-swe-agent': 'mini-swe-agent-deepseek',
};

export interface LoadRecordedOptions {
  sources?: readonly RecordedSourceName[];
  locomo?: LocomoLoadOptions;
}

/**
 * A neutral-format JSON file (validated), e.g. a user's own logs or the shipped sample; or a JSON Lines file
 * (`.jsonl`, `.ndjson`) with one neutral session per line, as `session-compaction export` writes it.
 */
export function loadNeutralFile(path: string): RecordedDataset {
  const name = path.replace(/^.*[\\/]/, '').replace(/\.(json|jsonl|ndjson)$/i, '');
  if (!/\.(jsonl|ndjson)$/i.test(path)) return validateRecordedDataset(readJson(path), name);
  const sessions = readFileSync(path, 'utf8')
    .split('\n')
    .flatMap((line, index) => {
      if (line.trim() === '') return [];
      try {
        return [JSON.parse(line) as unknown];
      } catch (error) {
        throw new InvalidArgumentError(`${path}:${index + 1} is not valid JSON: ${(error as Error).message}`, { cause: error });
      }
    });
  return validateRecordedDataset(sessions, name);
}

/**
 * A recorded-data directory (locomo/, tau-bench/, mini-swe-agent-deepseek/), or a single neutral-format file. Every loaded
 * dataset passes the neutral validator, so a loader bug surfaces as a clear error, not a wrong figure.
 */
export function loadRecordedData(path: string, options: LoadRecordedOptions = {}): RecordedDataset[] {
  if (!existsSync(path)) throw new InvalidArgumentError(`recorded data not found: ${path}`);
  if (statSync(path).isFile()) return [loadNeutralFile(path)];
  const wanted = options.sources ?? RECORDED_SOURCES;
  const out: RecordedDataset[] = [];
  for (const source of wanted) {
    const location = join(path, LAYOUT[source]);
    if (!existsSync(location)) continue;
    const dataset =
      source === 'locomo'
        ? loadLocomo(location, options.locomo)
        : source === 'tau-bench'
          ? loadTauBench(location)
          : loadMiniSweAgent(location);
    out.push(validateRecordedDataset(dataset, dataset.name));
  }
  if (out.length === 0) throw new InvalidArgumentError(`no recorded sources (${wanted.join(', ')}) found under ${path}`);
  return out;
}
