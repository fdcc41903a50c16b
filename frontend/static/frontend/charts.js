// @ts-check
// Charts drawn with the vendored Chart.js (vendor/chartjs, loaded before the page script as
// a classic script that defines `Chart`), each with its numbers one click away: "Show
// table" under the chart, and "Download CSV" of the same rows, made in the browser.

import { el } from "./http.js";
import { themeColour } from "./theme.js";

/** Okabe and Ito's colours, told apart with any colour vision (palette.css holds them, and
 * their dark-theme counterparts). */
export const PALETTE = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => `var(--chart-${n})`);

/** Charts drawn on this page with their specs, recoloured when the system's theme changes.
 * @type {Array<{chart: any, spec: ChartSpec}>} */
const drawn = [];

/** The chart's colours from the palette as it is now. @param {any} chart @param {ChartSpec} spec */
function paint(chart, spec) {
  const type = spec.type || "bar";
  chart.data.datasets.forEach((/** @type {any} */ dataset, /** @type {number} */ i) => {
    const series = spec.series[i];
    const colour = themeColour(series.color || PALETTE[i % PALETTE.length]);
    dataset.backgroundColor = type === "line" ? colour + "33" : colour;
    dataset.borderColor = colour;
  });
  const ink = themeColour("var(--chart-ink)");
  const grid = themeColour("var(--chart-grid)");
  chart.options.color = ink;
  chart.options.plugins.legend.labels = { ...(chart.options.plugins.legend.labels || {}), color: ink };
  for (const scale of Object.values(chart.options.scales)) {
    const axis = /** @type {any} */ (scale);
    axis.ticks = { ...(axis.ticks || {}), color: ink };
    axis.grid = { ...(axis.grid || {}), color: grid };
    axis.title = { ...(axis.title || {}), color: ink };
  }
}

const darkScheme = typeof window.matchMedia === "function" ? window.matchMedia("(prefers-color-scheme: dark)") : null;
darkScheme?.addEventListener("change", () => {
  for (const { chart, spec } of drawn) {
    paint(chart, spec);
    chart.update("none");
  }
});

/** @typedef {{key: string, label: string}} Column */
/** @typedef {{label: string, data: (number|null)[], errors?: ([number, number]|null)[], color?: string}} Series */
/** @typedef {{id: string, title: string, description?: string, type?: "bar"|"line",
 *   labels: string[], series: Series[], yTitle?: string, xTitle?: string, stacked?: boolean,
 *   yMin?: number, yMax?: number, columns: Column[], rows: Record<string, any>[],
 *   filename: string, horizontal?: boolean, height?: number}} ChartSpec */

/** RFC 4180 CSV of `rows` under `columns`: every field that holds a comma, a quote or a
 * line break is quoted, quotes doubled; a missing value is an empty field.
 * @param {Column[]} columns @param {Record<string, any>[]} rows */
export function toCsv(columns, rows) {
  /** @param {any} value */
  const field = (value) => {
    if (value === null || value === undefined) return "";
    const text = String(value);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  const lines = [columns.map((c) => field(c.label)).join(",")];
  for (const row of rows) lines.push(columns.map((c) => field(row[c.key])).join(","));
  return lines.join("\r\n") + "\r\n";
}

/** @param {any} value */
function cellText(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number") {
    return Number.isInteger(value) ? new Intl.NumberFormat(document.documentElement.lang || undefined).format(value)
      : value.toFixed(Math.abs(value) >= 100 ? 0 : 2);
  }
  return String(value);
}

/** Whiskers from each bar's `errors[i] = [low, high]` (a confidence interval). */
const errorBarsPlugin = {
  id: "rwErrorBars",
  /** @param {any} chart */
  afterDatasetsDraw(chart) {
    const { ctx, scales } = chart;
    const y = scales.y;
    chart.data.datasets.forEach((/** @type {any} */ dataset, /** @type {number} */ i) => {
      if (!dataset.errors || !chart.isDatasetVisible(i)) return;
      const meta = chart.getDatasetMeta(i);
      meta.data.forEach((/** @type {any} */ bar, /** @type {number} */ j) => {
        const range = dataset.errors[j];
        if (!range) return;
        const top = y.getPixelForValue(range[1]);
        const bottom = y.getPixelForValue(range[0]);
        const half = Math.min(8, (bar.width || 16) / 4);
        ctx.save();
        ctx.strokeStyle = themeColour("var(--chart-whisker)");
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        ctx.moveTo(bar.x, top);
        ctx.lineTo(bar.x, bottom);
        ctx.moveTo(bar.x - half, top);
        ctx.lineTo(bar.x + half, top);
        ctx.moveTo(bar.x - half, bottom);
        ctx.lineTo(bar.x + half, bottom);
        ctx.stroke();
        ctx.restore();
      });
    });
  },
};

/** A chart with its caption, its table (hidden until asked for) and its CSV download.
 * @param {HTMLElement} container @param {ChartSpec} spec @returns {HTMLElement} the figure */
export function chartPanel(container, spec) {
  const figure = el("figure", undefined, "chart-panel");
  figure.id = spec.id;
  const caption = el("figcaption");
  caption.append(el("span", spec.title, "chart-title"));
  if (spec.description) caption.append(el("span", spec.description, "chart-description muted"));
  const frame = el("div", undefined, "chart-frame");
  const canvas = el("canvas");
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", spec.title);
  frame.append(canvas);
  // A chart with many bars grows to keep them readable (set from script: CSP allows it).
  if (spec.height) frame.style.height = `${spec.height}px`;

  const actions = el("div", undefined, "chart-actions");
  const toggle = el("button", gettext("Show table"), "chart-table-toggle secondary");
  toggle.type = "button";
  toggle.setAttribute("aria-expanded", "false");
  const csv = el("a", gettext("Download CSV"), "chart-csv");
  csv.href = URL.createObjectURL(new Blob([toCsv(spec.columns, spec.rows)], { type: "text/csv" }));
  csv.download = spec.filename;
  actions.append(toggle, csv);

  const tableBox = el("div", undefined, "chart-table scroll");
  tableBox.hidden = true;
  const table = el("table", undefined, "grid");
  const head = el("tr");
  for (const c of spec.columns) head.append(el("th", c.label));
  table.append(el("thead"), el("tbody"));
  /** @type {HTMLElement} */ (table.tHead).append(head);
  for (const row of spec.rows) {
    const tr = el("tr");
    for (const c of spec.columns) tr.append(el("td", cellText(row[c.key])));
    table.tBodies[0].append(tr);
  }
  const tableId = `${spec.id}-table`;
  tableBox.id = tableId;
  toggle.setAttribute("aria-controls", tableId);
  tableBox.append(table);
  toggle.addEventListener("click", () => {
    tableBox.hidden = !tableBox.hidden;
    toggle.setAttribute("aria-expanded", String(!tableBox.hidden));
    toggle.textContent = tableBox.hidden ? gettext("Show table") : gettext("Hide table");
  });

  figure.append(caption, frame, actions, tableBox);
  container.append(figure);

  if (spec.series.length === 0 || spec.labels.length === 0) {
    frame.replaceChildren(el("p", gettext("No data yet."), "muted chart-empty"));
    return figure;
  }
  const type = spec.type || "bar";
  const ChartJs = /** @type {any} */ (window).Chart;
  const chart = new ChartJs(canvas, {
    type,
    data: {
      labels: spec.labels,
      datasets: spec.series.map((s, i) => ({
        label: s.label,
        data: s.data,
        errors: s.errors,
        borderWidth: type === "line" ? 2 : 0,
        fill: type === "line" && spec.stacked ? "stack" : false,
        pointRadius: type === "line" ? 2 : undefined,
        maxBarThickness: 56,
        tension: 0,
      })),
    },
    options: {
      indexAxis: spec.horizontal ? "y" : "x",
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      interaction: { mode: "index", intersect: false },
      plugins: {
        legend: { display: spec.series.length > 1, position: "bottom" },
        tooltip: {
          callbacks: {
            /** @param {any} item */
            afterLabel(item) {
              const range = item.dataset.errors && item.dataset.errors[item.dataIndex];
              return range ? interpolate(gettext("95% CI %(low)s – %(high)s"), { low: range[0].toFixed(2), high: range[1].toFixed(2) }, true) : "";
            },
          },
        },
      },
      scales: (() => {
        const category = { stacked: !!spec.stacked, title: { display: !!spec.xTitle, text: spec.xTitle || "" } };
        const value = {
          stacked: !!spec.stacked,
          min: spec.yMin,
          max: spec.yMax,
          beginAtZero: spec.yMin === undefined,
          title: { display: !!spec.yTitle, text: spec.yTitle || "" },
        };
        return spec.horizontal ? { y: category, x: value } : { x: category, y: value };
      })(),
    },
    plugins: [errorBarsPlugin],
  });
  paint(chart, spec);
  chart.update("none");
  drawn.push({ chart, spec });
  return figure;
}
