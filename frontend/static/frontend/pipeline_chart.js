// @ts-check
// The review pipeline over time: at the end of each day, how much work stood submitted, in
// review, revising, accepted and discarded (each annotation chain once, at its newest round).

import { api, el, errorText } from "./http.js";
import { chartPanel } from "./charts.js";

const root = document.getElementById("pipeline-over-time");
if (root) {
  const grid = /** @type {HTMLElement} */ (root.querySelector(".chart-grid"));
  // Stages in the order work moves, coloured by meaning (Okabe and Ito's colours).
  const STAGES = /** @type {[string, string, string][]} */ ([
    ["submitted", gettext("submitted"), "var(--chart-5)"],
    ["in_review", gettext("in review"), "var(--chart-1)"],
    ["revising", gettext("revising"), "var(--chart-2)"],
    ["accepted", gettext("accepted"), "var(--chart-3)"],
    ["discarded", gettext("discarded"), "var(--chart-6)"],
  ]);

  (async () => {
    const response = await api(`/api/projects/${root.dataset.projectId}/charts/pipeline/`, "GET");
    if (!response.ok) {
      grid.append(el("p", errorText(response.data), "error"));
      return;
    }
    const { days, stages } = response.data;
    const labels = days.map((/** @type {string} */ d) =>
      new Date(`${d}T12:00:00`).toLocaleDateString(document.documentElement.lang || undefined, { month: "short", day: "numeric" }));
    const rows = days.map((/** @type {string} */ day, /** @type {number} */ i) => {
      /** @type {Record<string, any>} */ const row = { day };
      for (const [key] of STAGES) row[key] = stages[key][i];
      return row;
    });
    chartPanel(grid, {
      id: "chart-pipeline-over-time",
      title: gettext("Review pipeline by day"),
      description: gettext("Annotations in each stage at the end of each day."),
      stacked: true,
      labels,
      series: STAGES.map(([key, label, color]) => ({ label, data: stages[key], color })),
      yTitle: gettext("annotations"),
      columns: [{ key: "day", label: gettext("day") }, ...STAGES.map(([key, label]) => ({ key, label }))],
      rows,
      filename: "review-pipeline-by-day.csv",
    }).classList.add("wide");
  })();
}
