// @ts-check
// Agreement dashboard: heat map, per-variant and per-worker tables, drawn client-side from
// the cached report (no external libraries, works offline). Text is inserted as text.

import { formatDateTime, formatNumber, formatTimeAgo } from "./format.js";
import { flagCounts } from "./flag_names.js";
import { api, el, errorText } from "./http.js";

/** Column headers by key: the key stays in data-column (English, for scripts and tests). */
const COLUMNS = /** @type {Record<string, string>} */ ({
  "variant": gettext("variant"),
  "length ratio": gettext("length ratio"),
  "stop-word share": gettext("stop-word share"),
  "punctuation share": gettext("punctuation share"),
  "intra kappa": gettext("intra kappa"),
  "95% CI": gettext("95% CI"),
  "Fleiss": gettext("Fleiss"),
  "Krippendorff α": gettext("Krippendorff α"),
  "median s": gettext("median s"),
  "empty rate": gettext("empty rate"),
  "annotators": gettext("annotators"),
  "items": gettext("items"),
  "worker": gettext("worker"),
  "cohort": gettext("cohort"),
  "status": gettext("status"),
  "variants": gettext("variants"),
  "annotations": gettext("annotations"),
  "kappa vs majority": gettext("kappa vs majority"),
  "F1 vs majority": gettext("F1 vs majority"),
  "flags": gettext("flags"),
  "variant A": gettext("variant A"),
  "variant B": gettext("variant B"),
  "difference": gettext("difference"),
  "p-value": gettext("p-value"),
  "permutations": gettext("permutations"),
  "F1 vs curated gold": gettext("F1 vs curated gold"),
  "kappa vs curated gold": gettext("kappa vs curated gold"),
  "shows suggestions": gettext("shows suggestions"),
  "F1 vs suggestions": gettext("F1 vs suggestions"),
  "F1 vs other variants": gettext("F1 vs other variants"),
});

const found = document.getElementById("agreement");
if (found) {
  // Named again so the functions below see an element, not "element or null".
  const root = found;
  const base = `/api/projects/${root.dataset.projectId}/agreement/`;
  const status = /** @type {HTMLElement} */ (root.querySelector(".agreement-status"));
  /** Whole numbers keep their decimals here: a column of kappas lines up.
   * @param {any} x @param {number} [digits] */
  const fmt = (x, digits = 2) => formatNumber(x, digits, true);

  /** A diverging colour for kappa in [-1, 1]. @param {number|null} k */
  function colour(k) {
    if (k === null || k === undefined) return "#f2f4f7";
    const t = Math.max(-1, Math.min(1, k));
    // At most 60% of the colour over white, so the cell's dark text keeps a 4.5:1 contrast (WCAG AA).
    return t >= 0 ? `rgba(47, 111, 222, ${0.1 + 0.5 * t})` : `rgba(180, 35, 24, ${0.1 + 0.5 * -t})`;
  }

  /** @param {HTMLTableElement} table @param {string[]} headers @param {any[][]} rows @param {string} [key] */
  function fill(table, headers, rows, key) {
    const head = el("tr");
    headers.forEach((h) => head.appendChild(el("th", COLUMNS[h] ?? h)));
    const body = el("tbody");
    for (const row of rows) {
      const tr = el("tr");
      if (key) tr.dataset.key = String(row[0]);
      row.forEach((cell, i) => { const td = el("td", String(cell)); td.dataset.column = headers[i]; tr.appendChild(td); });
      body.appendChild(tr);
    }
    const thead = el("thead");
    thead.appendChild(head);
    table.replaceChildren(thead, body);
  }

  /** A group x group kappa heat map; each cell shows kappa, n items and excluded pairs.
   * @param {HTMLTableElement} table @param {{variants: string[], cells: Record<string, any>}} matrix */
  function heatmap(table, matrix) {
    const groups = matrix.variants;
    const head = el("tr");
    head.appendChild(el("th", ""));
    groups.forEach((v) => head.appendChild(el("th", v)));
    const body = el("tbody");
    for (const a of groups) {
      const tr = el("tr");
      tr.appendChild(el("th", a));
      for (const b of groups) {
        const cell = matrix.cells[a <= b ? `${a}|${b}` : `${b}|${a}`];
        const td = el("td");
        td.dataset.cell = `${a}|${b}`;
        if (cell) {
          td.style.background = colour(cell.kappa);
          td.appendChild(el("div", fmt(cell.kappa))).className = "kappa";
          td.appendChild(el("div", interpolate(gettext("n=%(items)s · excl. %(excluded_pairs)s"), cell, true))).className = "muted small";
        } else {
          td.textContent = "–";
        }
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    const thead = el("thead");
    thead.appendChild(head);
    table.replaceChildren(thead, body);
  }

  /** @param {any} report */
  function render(report) {
    heatmap(/** @type {HTMLTableElement} */ (root.querySelector("#matrix")), report.matrix);
    fill(/** @type {HTMLTableElement} */ (root.querySelector("#variant-table")),
      ["variant", "length ratio", "stop-word share", "punctuation share", "intra kappa", "95% CI", "Fleiss", "Krippendorff α",
        "median s", "empty rate", "annotators", "items"],
      report.variants.map((/** @type {any} */ v) => [v.variant, fmt(v.length_ratio), fmt(v.stop_word_share), fmt(v.punctuation_share),
        fmt(v.intra_kappa), v.intra_kappa_ci95 ? `${fmt(v.intra_kappa_ci95[0])} – ${fmt(v.intra_kappa_ci95[1])}` : gettext("n/a"),
        fmt(v.fleiss_kappa), fmt(v.krippendorff_alpha), fmt(v.seconds.median, 1), fmt(v.empty_rate), formatNumber(v.annotators), formatNumber(v.items)]), "key");
    fill(/** @type {HTMLTableElement} */ (root.querySelector("#worker-table")),
      ["worker", "cohort", "status", "variants", "annotations", "kappa vs majority", "F1 vs majority", "median s", "empty rate",
        "stop-word share", "flags"],
      report.workers.map((/** @type {any} */ w) => [w.worker, w.cohort ?? "", w.status ?? "", w.variants.join(", "), formatNumber(w.annotations),
        fmt(w.majority_kappa), fmt(w.majority_f1), fmt(w.median_seconds, 1), fmt(w.empty_rate), fmt(w.stop_word_share),
        flagCounts(w.flags || {}) || gettext("none")]), "key");
    fill(/** @type {HTMLTableElement} */ (root.querySelector("#test-table")),
      ["variant A", "variant B", "difference", "p-value", "permutations"],
      report.permutation_tests.map((/** @type {any} */ t) => [t.a, t.b, fmt(t.difference), fmt(t.p_value, 4), formatNumber(t.permutations)]));
    const cohorts = Array.isArray(report.cohorts) ? report.cohorts : [];
    fill(/** @type {HTMLTableElement} */ (root.querySelector("#cohort-table")),
      ["cohort", "variants", "length ratio", "stop-word share", "intra kappa", "95% CI", "median s", "empty rate", "annotators", "items"],
      cohorts.map((/** @type {any} */ c) => [c.cohort, c.variants.join(", "), fmt(c.length_ratio), fmt(c.stop_word_share),
        fmt(c.intra_kappa), c.intra_kappa_ci95 ? `${fmt(c.intra_kappa_ci95[0])} – ${fmt(c.intra_kappa_ci95[1])}` : gettext("n/a"),
        fmt(c.seconds.median, 1), fmt(c.empty_rate), formatNumber(c.annotators), formatNumber(c.items)]), "key");
    const cohortMatrix = /** @type {HTMLTableElement} */ (root.querySelector("#cohort-matrix"));
    if (report.cohort_matrix) heatmap(cohortMatrix, report.cohort_matrix);
    else cohortMatrix.replaceChildren(el("caption", gettext("Every worker is in one cohort: nothing to compare yet.")));
  }

  /** Each variant's and each annotator's token F1 and kappa against the curated gold, as
   * they stand now (not part of the cached report); hidden until an item is curated.
   * @param {any} gold */
  function renderCuratedGold(gold) {
    const box = /** @type {HTMLElement} */ (root.querySelector("#curated-gold"));
    box.hidden = !gold;
    if (!gold) return;
    /** @type {HTMLElement} */ (box.querySelector(".curated-gold-summary")).textContent = interpolate(
      gettext("%(items)s curated items (%(hand)s by hand, %(rule)s by rule). Each current annotation of a curated item against its gold: token F1 and Cohen's kappa, mean per variant and per annotator."),
      { items: formatNumber(gold.items), hand: formatNumber(gold.curated_by_hand), rule: formatNumber(gold.curated_by_rule) }, true);
    /** @param {Record<string, any>} rows */
    const table = (rows) => Object.entries(rows).map(([name, r]) => [name, fmt(r.f1), fmt(r.kappa), formatNumber(r.n)]);
    fill(/** @type {HTMLTableElement} */ (root.querySelector("#curated-variant-table")),
      ["variant", "F1 vs curated gold", "kappa vs curated gold", "annotations"], table(gold.variants), "key");
    fill(/** @type {HTMLTableElement} */ (root.querySelector("#curated-worker-table")),
      ["worker", "F1 vs curated gold", "kappa vs curated gold", "annotations"], table(gold.annotators), "key");
  }

  /** @param {number[]|null} ci */
  const interval = (ci) => (ci ? `${fmt(ci[0])} – ${fmt(ci[1])}` : gettext("n/a"));

  /** How much each variant that shows model suggestions pulls its annotators toward the
   * model (computed on request); hidden where no variant shows any. */
  async function loadSuggestionPull() {
    const box = /** @type {HTMLElement} */ (root.querySelector("#suggestion-pull"));
    const response = await api(`${base}suggestions/`, "GET");
    const reports = response.ok && Array.isArray(response.data.reports) ? response.data.reports : [];
    box.hidden = reports.length === 0;
    const holder = /** @type {HTMLElement} */ (box.querySelector(".suggestion-reports"));
    holder.replaceChildren();
    for (const report of reports) {
      holder.appendChild(el("h3", interpolate(ngettext("%(variant)s: the top %(k)s tokens of explainer run %(run)s, on %(items)s item",
        "%(variant)s: the top %(k)s tokens of explainer run %(run)s, on %(items)s items", report.items_with_suggestions),
      { variant: report.variant, k: report.k, run: report.run, items: formatNumber(report.items_with_suggestions) }, true)));
      const variants = /** @type {HTMLTableElement} */ (el("table", undefined, "grid suggestion-variants"));
      fill(variants, ["variant", "shows suggestions", "F1 vs suggestions", "95% CI", "annotations", "F1 vs other variants", "95% CI"],
        report.variants.map((/** @type {any} */ v) => [v.variant, v.shows_suggestions ? gettext("yes") : gettext("no"),
          fmt(v.f1_suggestions), interval(v.f1_suggestions_ci), formatNumber(v.annotations),
          fmt(v.f1_other_variants), interval(v.f1_other_variants_ci)]), "key");
      const tests = /** @type {HTMLTableElement} */ (el("table", undefined, "grid suggestion-tests"));
      fill(tests, ["variant A", "variant B", "difference", "p-value", "permutations"],
        report.permutation_tests.map((/** @type {any} */ t) => [t.a, t.b, fmt(t.difference), fmt(t.p_value, 4), formatNumber(t.permutations)]));
      const scrolled = el("div", undefined, "scroll");
      scrolled.appendChild(variants);
      holder.append(scrolled, tests);
    }
    box.dataset.ready = "true";
  }

  /** When the report was computed and what has changed since, as a sentence in the reader's
   * language ("Computed 5 minutes ago; 12 annotations were submitted since.").
   * @param {any} body */
  function computedNotice(body) {
    const ago = body.computed_at ? formatTimeAgo(body.computed_at) : gettext("at an unknown time");
    const since = Number(body.annotations_since || 0);
    if (since > 0) {
      return interpolate(ngettext(
        "Computed %(ago)s; %(count)s annotation was submitted since. Recompute to include it.",
        "Computed %(ago)s; %(count)s annotations were submitted since. Recompute to include them.",
        since), { ago, count: formatNumber(since) }, true);
    }
    if (body.stale) {
      return interpolate(gettext("Computed %(ago)s; annotations have changed since. Recompute to catch up."), { ago }, true);
    }
    return interpolate(ngettext("Computed %(ago)s over %(count)s annotation.", "Computed %(ago)s over %(count)s annotations.",
      Number(body.annotations_seen)), { ago, count: formatNumber(body.annotations_seen) }, true);
  }

  async function load() {
    const response = await api(base, "GET");
    if (!response.ok) {
      status.textContent = errorText(response.data);
      status.className = "agreement-status error";
      return;
    }
    const body = response.data;
    status.className = "agreement-status muted";
    root.dataset.status = body.status;
    root.dataset.stale = String(body.stale);
    if (body.status === "running") {
      // The progress bar above the charts (agreement_charts.js) shows the counts and time left.
      status.textContent = "";
      window.setTimeout(load, 1000);
    } else if (body.status === "none") {
      status.textContent = gettext("No report yet: press Recompute.");
    } else if (body.status === "failed") {
      status.textContent = interpolate(gettext("The last computation failed: %(error)s"), { error: body.error }, true);
    } else {
      status.textContent = computedNotice(body);
      status.title = body.computed_at ? formatDateTime(body.computed_at) : "";
      status.className = `agreement-status ${body.stale ? "warning" : "muted"}`;
    }
    if (body.report) render(body.report);
    renderCuratedGold(body.curated_gold);
    if (body.status !== "running") {
      // For the browser tests and bench/pages.py: the heat map and tables are drawn.
      root.dataset.ready = "true";
      performance.mark("agreement-tables-drawn");
    }
  }

  root.querySelector("#refresh-report")?.addEventListener("click", async () => {
    const response = await api(`${base}refresh/`, "POST");
    if (!response.ok) {
      status.textContent = errorText(response.data);
      status.className = "agreement-status error";
      return;
    }
    load();
  });
  load();
  loadSuggestionPull();
}
