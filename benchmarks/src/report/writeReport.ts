import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResult } from '../runBench.js';
import {
  costVsAnswerByBudgetSpec,
  costVsAnswerSpec,
  fidelityVsTokensSpec,
  retentionVsTokensSpec,
  sawtoothSpec,
  scalingSpec,
} from './chartSpecs.js';
import { LANGCHAIN_PEER, renderMarkdown, type ChartFiles } from './renderMarkdown.js';
import { CHARTS_INSTALL, loadChartRenderer, type ChartRenderer } from './loadChartRenderer.js';

/** Writes results.md, results.json and the SVG charts into `outDir`; returns the files written. */
export async function writeReport(result: BenchResult, outDir: string): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  const written: string[] = [];
  const write = (name: string, content: string) => {
    writeFileSync(join(outDir, name), content);
    written.push(join(outDir, name));
  };
  const charts: ChartFiles = {
    retention: new Map(),
    sawtooth: new Map(),
    cost: new Map(),
    costByBudget: new Map(),
    fidelity: new Map(),
  };
  const renderer = await loadChartRenderer();
  const renderChart: ChartRenderer | null = 'render' in renderer ? renderer.render : null;
  if ('unavailable' in renderer) charts.unavailable = `charts not rendered: ${renderer.unavailable} — \`${CHARTS_INSTALL}\``;
  for (const dataset of new Set(result.summaries.map((s) => s.dataset))) {
    if (renderChart === null) break;
    const name = `retention-vs-tokens-${dataset}.svg`;
    write(name, await renderChart(retentionVsTokensSpec(dataset, result.summaries)));
    charts.retention.set(dataset, name);
  }
  for (const dataset of new Set(result.summaries.filter((s) => s.recall !== undefined).map((s) => s.dataset))) {
    if (renderChart === null) break;
    const name = `fidelity-vs-tokens-${dataset}.svg`;
    write(name, await renderChart(fidelityVsTokensSpec(dataset, result.summaries)));
    charts.fidelity!.set(dataset, name);
  }
  const presets = [...new Set(result.summaries.flatMap((s) => s.cost.map((c) => c.preset)))];
  for (const dataset of new Set(result.summaries.map((s) => s.dataset))) {
    for (const preset of presets) {
      if (renderChart === null) break;
      const name = `cost-vs-answer-${dataset}-${preset}.svg`;
      write(name, await renderChart(costVsAnswerSpec(dataset, preset, result.summaries)));
      charts.cost!.set(`${dataset}\u0000${preset}`, name);
    }
  }
  for (const dataset of new Set(result.summaries.map((s) => s.dataset))) {
    const info = result.datasets.find((d) => d.name === dataset);
    const budgets = [...new Set(result.summaries.filter((s) => s.dataset === dataset).map((s) => s.budgetTokens))];
    for (const budget of budgets.sort((a, b) => a - b)) {
      const peer = result.summaries.find(
        (s) => s.dataset === dataset && s.budgetTokens === budget && s.contender === LANGCHAIN_PEER,
      );
      if (renderChart === null || peer === undefined || peer.cost.length === 0) continue;
      const references = peer.cost.map((c) => ({
        preset: c.preset,
        peer: c.costPerConversation,
        floor: info?.floorCost.find((f) => f.preset === c.preset)?.costPerConversation,
        perfectCache: info?.perfectCacheCost?.find((f) => f.preset === c.preset)?.costPerConversation,
      }));
      const name = `cost-vs-answer-${dataset}-${budget}.svg`;
      write(name, await renderChart(costVsAnswerByBudgetSpec(dataset, budget, result.summaries, references)));
      charts.costByBudget!.set(`${dataset}\u0000${budget}`, name);
    }
  }
  for (const series of result.sawtooth) {
    if (series.series.length === 0 || renderChart === null) continue;
    const name = `sawtooth-${series.dataset}.svg`;
    write(name, await renderChart(sawtoothSpec(series)));
    charts.sawtooth.set(series.dataset, name);
  }
  if (result.scaling.length > 0 && renderChart !== null) {
    write('scaling.svg', await renderChart(scalingSpec(result.scaling)));
    charts.scaling = 'scaling.svg';
  }
  write('results.md', renderMarkdown(result, charts));
  const { sawtooth: _sawtooth, ...rest } = result;
  write('results.json', JSON.stringify(rest, null, 2) + '\n');
  return written;
}
