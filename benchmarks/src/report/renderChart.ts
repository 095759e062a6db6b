import * as vega from 'vega';
import * as vl from 'vega-lite';

/** Renders a Vega-Lite spec to SVG headlessly (no canvas, no browser). */
export async function renderChart(spec: vl.TopLevelSpec): Promise<string> {
  const compiled = vl.compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
