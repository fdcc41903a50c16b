// @ts-check
// The results board as bars: each metric, one bar per explainer run, beside the sortable
// table (results.js). Drawn again only when the runs' scores change.

import { chartPanel } from "./charts.js";
import { el } from "./http.js";
import { metricHeading } from "./metric_names.js";

let drawnFor = "";
/** The metrics a reader compares explainers by first: plausibility (token and IOU F1,
 * AUPRC), faithfulness (comprehensiveness, sufficiency), accuracy, and the fine-grained
 * benchmark's token F1, IoU match rate, MAP and New-P. */
const HEADLINE = /(^token_prf\.instance_macro\.f1|^iou_scores@0\.5\.macro\.f1|^token_soft_metrics\.auprc|^classification_scores\.(comprehensiveness|sufficiency|accuracy)|token_f1|iou_match_rate|\.map|new_p)$/;

/** @param {HTMLElement} container
 * @param {{run: any, values: Record<string, number>}[]} flat the runs with their scores,
 *   flattened to one number per metric name */
export function resultsChartDraw(container, flat) {
  const scored = flat.filter(({ run }) => run.status === "succeeded" && Object.keys(run.scores || {}).length);
  const signature = JSON.stringify(scored.map(({ run, values }) => [run.id, values]));
  if (signature === drawnFor) return;
  drawnFor = signature;
  clear(container);
  if (!scored.length) return;
  // Scores on one scale (-1 to 1): counts such as support or k are left to the table below.
  const inRange = [...new Set(scored.flatMap(({ values }) => Object.keys(values)))].sort().filter((metric) =>
    !/(support|instances|\.k)$/.test(metric) &&
    scored.every(({ values }) => !(metric in values) || Math.abs(values[metric]) <= 1));
  const headline = inRange.filter((metric) => HEADLINE.test(metric));
  const choice = el("label", gettext("Metrics"), "results-chart-choice");
  const select = el("select");
  for (const [value, label] of [["headline", gettext("headline")], ["all", gettext("every score")]]) {
    const option = el("option", label);
    option.value = value;
    select.append(option);
  }
  if (headline.length < 3) select.value = "all";
  choice.append(" ", select);
  const holder = el("div", undefined, "chart-grid");
  container.append(choice, holder);
  const draw = () => drawMetrics(holder, scored, select.value === "all" ? inRange : headline);
  select.addEventListener("change", draw);
  draw();
}

/** @param {HTMLElement} container */
function clear(container) {
  container.querySelectorAll("canvas").forEach((canvas) => /** @type {any} */ (window).Chart?.getChart(canvas)?.destroy());
  container.replaceChildren();
}

/** @param {HTMLElement} holder @param {{run: any, values: Record<string, number>}[]} scored
 * @param {string[]} metrics */
function drawMetrics(holder, scored, metrics) {
  clear(holder);
  const runName = (/** @type {any} */ run) => run.name + (run.explainer ? ` (${run.explainer})` : "");
  // Words a reader knows on the chart and in the table ("Token F1 (macro)"); the score's key
  // stays beside them for scripts reading the CSV.
  const names = metrics.map((metric) => metricHeading(metric).label);
  const rows = metrics.map((metric, index) => {
    /** @type {Record<string, any>} */ const row = { metric: names[index], key: metric };
    for (const { run, values } of scored) row[`run-${run.id}`] = metric in values ? values[metric] : null;
    return row;
  });
  chartPanel(holder, {
    id: "chart-results-board",
    title: gettext("Each metric per explainer"),
    description: gettext("One bar per run for each score between -1 and 1; counts are in the table below."),
    horizontal: true,
    height: Math.max(240, 40 + metrics.length * (10 + 8 * scored.length)),
    labels: names,
    series: scored.map(({ run, values }) => ({
      label: runName(run),
      data: metrics.map((m) => (m in values ? values[m] : null)),
    })),
    columns: [{ key: "metric", label: gettext("metric") }, { key: "key", label: gettext("key") },
      ...scored.map(({ run }) => ({ key: `run-${run.id}`, label: runName(run) }))],
    rows,
    filename: "results-board.csv",
  }).classList.add("wide");
}
