// @ts-check
// The results board as bars: each metric, one bar per explainer run, beside the sortable
// table (results.js). Drawn again only when the runs' scores change.

import { chartPanel } from "./charts.js";

let drawnFor = "";

/** @param {HTMLElement} container
 * @param {{run: any, values: Record<string, number>}[]} flat the runs with their scores,
 *   flattened to one number per metric name */
export function resultsChartDraw(container, flat) {
  const scored = flat.filter(({ run }) => run.status === "succeeded" && Object.keys(run.scores || {}).length);
  const signature = JSON.stringify(scored.map(({ run, values }) => [run.id, values]));
  if (signature === drawnFor) return;
  drawnFor = signature;
  container.querySelectorAll("canvas").forEach((canvas) => /** @type {any} */ (window).Chart?.getChart(canvas)?.destroy());
  container.replaceChildren();
  if (!scored.length) return;
  const metrics = [...new Set(scored.flatMap(({ values }) => Object.keys(values)))].sort();
  const runName = (/** @type {any} */ run) => run.name + (run.explainer ? ` (${run.explainer})` : "");
  const rows = metrics.map((metric) => {
    /** @type {Record<string, any>} */ const row = { metric };
    for (const { run, values } of scored) row[`run-${run.id}`] = metric in values ? values[metric] : null;
    return row;
  });
  chartPanel(container, {
    id: "chart-results-board",
    title: gettext("Every metric per explainer"),
    description: gettext("One bar per run for each metric; metric names are the scores' own keys."),
    horizontal: true,
    height: Math.max(240, 40 + metrics.length * (10 + 8 * scored.length)),
    labels: metrics,
    series: scored.map(({ run, values }) => ({
      label: runName(run),
      data: metrics.map((m) => (m in values ? values[m] : null)),
    })),
    columns: [{ key: "metric", label: gettext("metric") },
      ...scored.map(({ run }) => ({ key: `run-${run.id}`, label: runName(run) }))],
    rows,
    filename: "results-board.csv",
  }).classList.add("wide");
}
