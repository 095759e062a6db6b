import type { TopLevelSpec } from 'vega-lite';

export type ChartRenderer = (spec: TopLevelSpec) => Promise<string>;

/** The command that installs what the charts need. */
export const CHARTS_INSTALL = 'npm install vega vega-lite';

/**
 * The SVG renderer, or why there is none: vega and vega-lite are not dependencies of the package, and without
 * them the tables are still written.
 */
export async function loadChartRenderer(): Promise<{ render: ChartRenderer } | { unavailable: string }> {
  try {
    const { renderChart } = await import('./renderChart.js');
    return { render: renderChart };
  } catch (error) {
    return { unavailable: `vega/vega-lite are not installed (${(error as Error).message.split('\n')[0]})` };
  }
}
