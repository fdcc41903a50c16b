// @ts-check
// The agreement page's charts: per instruction variant, the length ratio, the stop-word
// share, and intra-variant kappa with its bootstrap 95% CI as error bars; the seconds spent
// per item as a histogram per variant. While the report is being computed, its progress
// bar; when it is done, the charts are drawn again from the new report.

import { api, el, errorText } from "./http.js";
import { chartPanel } from "./charts.js";
import { formatNumber } from "./format.js";
import { trackProgress } from "./progress.js";

const root = document.getElementById("agreement-charts");
if (root) {
  const projectId = root.dataset.projectId;
  const base = `/api/projects/${projectId}`;
  const charts = /** @type {HTMLElement} */ (root.querySelector(".chart-grid"));
  const progressBox = /** @type {HTMLElement} */ (root.querySelector(".agreement-progress"));
  /** @type {{stop: () => void}|null} */ let tracking = null;

  /** @param {any} report */
  function drawVariantCharts(report) {
    const variants = (report && report.variants) || [];
    const labels = variants.map((/** @type {any} */ v) => v.variant);
    const rows = variants.map((/** @type {any} */ v) => ({
      variant: v.variant,
      annotations: v.annotations,
      length_ratio: v.length_ratio,
      stop_word_share: v.stop_word_share,
      intra_kappa: v.intra_kappa,
      ci_low: v.intra_kappa_ci95 ? v.intra_kappa_ci95[0] : null,
      ci_high: v.intra_kappa_ci95 ? v.intra_kappa_ci95[1] : null,
    }));
    const variantColumn = { key: "variant", label: gettext("variant") };
    const annotations = { key: "annotations", label: gettext("annotations") };
    chartPanel(charts, {
      id: "chart-length-ratio",
      title: gettext("Length ratio"),
      description: gettext("Share of an item's tokens highlighted, mean over annotations."),
      labels,
      series: [{ label: gettext("length ratio"), data: rows.map((/** @type {any} */ r) => r.length_ratio) }],
      yMin: 0,
      columns: [variantColumn, annotations, { key: "length_ratio", label: gettext("length ratio") }],
      rows,
      filename: "length-ratio-by-variant.csv",
    });
    chartPanel(charts, {
      id: "chart-stop-word-share",
      title: gettext("Stop-word share"),
      description: gettext("Share of highlighted tokens that are stop words, mean over non-empty annotations."),
      labels,
      series: [{ label: gettext("stop-word share"), data: rows.map((/** @type {any} */ r) => r.stop_word_share) }],
      yMin: 0,
      yMax: 1,
      columns: [variantColumn, annotations, { key: "stop_word_share", label: gettext("stop-word share") }],
      rows,
      filename: "stop-word-share-by-variant.csv",
    });
    chartPanel(charts, {
      id: "chart-kappa",
      title: gettext("Intra-variant kappa"),
      description: gettext("Mean token-level Cohen's kappa between annotators of the same item; whiskers: bootstrap 95% CI."),
      labels,
      series: [{
        label: gettext("kappa"),
        data: rows.map((/** @type {any} */ r) => r.intra_kappa),
        errors: rows.map((/** @type {any} */ r) => (r.ci_low === null ? null : [r.ci_low, r.ci_high])),
      }],
      yMax: 1,
      columns: [variantColumn, annotations, { key: "intra_kappa", label: gettext("kappa") },
        { key: "ci_low", label: gettext("95% CI low") }, { key: "ci_high", label: gettext("95% CI high") }],
      rows,
      filename: "kappa-by-variant.csv",
    });
  }

  /** @param {any} distribution */
  function drawSecondsChart(distribution) {
    const edges = distribution.edges || [];
    // Bin edges in the reader's format, to a tenth below 10 s and whole seconds above: "9.1–12 s", not "9.11–11.5 s".
    const secs = (/** @type {number} */ x) => formatNumber(x, x < 10 ? 1 : 0);
    const labels = edges.slice(0, -1).map((/** @type {number} */ low, /** @type {number} */ i) =>
      i === edges.length - 2 ? `≥ ${secs(low)} s` : `${secs(low)}–${secs(edges[i + 1])} s`);
    const groups = distribution.groups || [];
    /** @type {Record<string, any>[]} */ const rows = [];
    for (const g of groups) {
      g.counts.forEach((/** @type {number} */ count, /** @type {number} */ i) =>
        rows.push({ variant: g.group, bin: labels[i], annotations: count }));
    }
    const summary = groups.map((/** @type {any} */ g) => interpolate(
      gettext("%(variant)s: median %(median)s s (quartiles %(q1)s–%(q3)s)"),
      { variant: g.group, median: Math.round(g.median), q1: Math.round(g.q1), q3: Math.round(g.q3) }, true)).join("; ");
    chartPanel(charts, {
      id: "chart-seconds-per-item",
      title: gettext("Seconds per item"),
      description: summary || gettext("How long annotators spent on an item (first rounds), per variant."),
      labels,
      series: groups.map((/** @type {any} */ g) => ({ label: g.group, data: g.counts })),
      xTitle: gettext("seconds per item"),
      yTitle: gettext("annotations"),
      columns: [{ key: "variant", label: gettext("variant") }, { key: "bin", label: gettext("seconds") },
        { key: "annotations", label: gettext("annotations") }],
      rows,
      filename: "seconds-per-item-by-variant.csv",
    }).classList.add("wide");
  }

  async function draw() {
    const [report, seconds] = await Promise.all([api(`${base}/agreement/`, "GET"), api(`${base}/charts/seconds-per-item/`, "GET")]);
    charts.replaceChildren();
    if (!report.ok) {
      charts.append(el("p", errorText(report.data), "error"));
      return;
    }
    if (report.data.status === "running") follow();
    drawVariantCharts(report.data.report);
    if (seconds.ok) drawSecondsChart(seconds.data);
    else charts.append(el("p", errorText(seconds.data), "error"));
    // For the browser tests and bench/pages.py: every chart is drawn.
    charts.dataset.ready = "true";
    performance.mark("agreement-charts-drawn");
  }

  function follow() {
    if (tracking) return;
    progressBox.hidden = false;
    tracking = trackProgress(progressBox, `${base}/agreement/progress/`, {
      resultLabel: gettext("Report ready"),
      onFinal(p) {
        tracking = null;
        if (p.status === "succeeded") {
          progressBox.hidden = true;
          draw();
        }
      },
    });
  }

  // The page's Recompute button starts a run (agreement.js); the bar follows it.
  document.getElementById("refresh-report")?.addEventListener("click", () => window.setTimeout(follow, 300));
  draw();
}
