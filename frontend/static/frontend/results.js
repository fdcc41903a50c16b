// @ts-check
// Results board: explainer runs on an export, every metric side by side, sortable.
// Server strings are inserted as text only. Metric names are the scores' own keys, untranslated.

import { formatNumber } from "./format.js";
import { clearFormErrors, showFormErrors } from "./form_errors.js";
import { api, el, errorText } from "./http.js";
import { metricHeading } from "./metric_names.js";
import { jobProgressList } from "./progress.js";
import { resultsChartDraw } from "./results_chart.js";

/** The two fixed columns and run statuses, by their API names. */
const HEADINGS = /** @type {Record<string, string>} */ ({ name: gettext("name"), model: gettext("model"), status: gettext("status") });
/** The fixed columns, read from the run itself rather than its scores. */
const RUN_COLUMNS = ["name", "model", "status"];
/** The explainers a run offers: the bag-of-words baseline's, or a registered model's. */
const BASELINE_EXPLAINERS = ["occlusion", "lime", "linear", "random"];
const MODEL_EXPLAINERS = ["gradient", "gradient_x_input", "integrated_gradients", "attention_last", "attention_rollout", "occlusion", "lime", "shap"];
const STATUS = /** @type {Record<string, string>} */ ({
  pending: gettext("pending"),
  running: gettext("running"),
  succeeded: gettext("succeeded"),
  failed: gettext("failed"),
});

const board = document.getElementById("results-board");
if (board) {
  const projectId = board.dataset.projectId;
  const select = /** @type {HTMLSelectElement} */ (board.querySelector("#run-export"));
  const form = /** @type {HTMLFormElement} */ (board.querySelector("#run-form"));
  const status = /** @type {HTMLElement} */ (board.querySelector(".run-status"));
  const table = /** @type {HTMLTableElement} */ (board.querySelector("#runs"));
  const variantsTable = /** @type {HTMLTableElement} */ (board.querySelector("#plausibility"));
  const problemsBox = /** @type {HTMLElement} */ (board.querySelector("#run-problems"));
  const modelSelect = /** @type {HTMLSelectElement} */ (board.querySelector("#run-model"));
  const explainerSelect = /** @type {HTMLSelectElement} */ (board.querySelector("#run-explainer"));
  const optionFields = /** @type {HTMLLabelElement[]} */ ([...board.querySelectorAll(".model-option")]);
  // The board as bars, above its table.
  const chartArea = el("div", undefined, "chart-grid results-chart");
  table.closest(".scroll")?.before(chartArea);
  // A live bar for each run still being explained or scored.
  const live = el("div");
  status.after(live);
  /** @type {Map<string, ReturnType<typeof jobProgressList>>} */ const barsByExport = new Map();
  /** @param {string} exportId */
  const barsFor = (exportId) => {
    let bars = barsByExport.get(exportId);
    if (!bars) {
      const area = el("div");
      live.append(area);
      bars = jobProgressList(area, {
        url: (id) => `/api/projects/${projectId}/exports/${exportId}/runs/${id}/progress/`,
        onFinal: () => loadRuns(),
      });
      barsByExport.set(exportId, bars);
    }
    return bars;
  };
  /** @type {any[]} */ let runs = [];
  /** @type {HTMLElement | null} */ let definitionsShown = null;
  let sortKey = "name";
  let sortDescending = false;

  /** @param {string} text @param {boolean} failed */
  function say(text, failed) {
    status.textContent = text;
    status.className = `run-status ${failed ? "error" : "muted"}`;
  }
  /** Whether the line shows a failed load, which the next good load takes away. */
  let showingLoadError = false;
  /** @param {import("./http.js").ApiResponse} response */
  function loadFailed(response) {
    say(errorText(response.data), true);
    showingLoadError = true;
  }
  function loadRecovered() {
    if (showingLoadError) say("", false);
    showingLoadError = false;
  }

  /** Flatten numeric leaves: "token_prf.instance_macro.f1" -> number. @param {any} value @param {string} path @param {Record<string, number>} out */
  function flatten(value, path, out) {
    if (typeof value === "number") { out[path] = value; return out; }
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        const label = v && typeof v === "object" && "threshold" in v ? `@${v.threshold}` : `[${i}]`;
        if (typeof v === "object") flatten(v, `${path}${label}`, out);
      });
      return out;
    }
    if (value && typeof value === "object") {
      // "details" (a fine-grained run's counts and options) are not metrics.
      for (const [k, v] of Object.entries(value)) if (k !== "threshold" && k !== "details") flatten(v, path ? `${path}.${k}` : k, out);
    }
    return out;
  }

  async function loadExports() {
    const response = await api(`/api/projects/${projectId}/exports/?limit=200`, "GET");
    if (!response.ok) return loadFailed(response);
    const body = response.data;
    const current = select.value;
    select.replaceChildren();
    for (const exp of body.results.filter((/** @type {any} */ e) => e.status === "succeeded")) {
      // Runs on a benchmark-layout export are scored with the benchmark's metrics (MAP, New-P).
      const layout = exp.params.layout === "benchmark" ? gettext(" (fine-grained benchmark)") : "";
      const option = el("option", `#${exp.id} ${exp.params.selection}/${exp.params.aggregation}${layout}`);
      option.value = String(exp.id);
      select.appendChild(option);
    }
    if (current) select.value = current;
    loadRuns();
  }

  /** The project's registered models, as choices beside the baseline. */
  async function loadModels() {
    const response = await api(`/api/projects/${projectId}/models/?limit=200`, "GET");
    if (!response.ok) return;
    const current = modelSelect.value;
    while (modelSelect.options.length > 1) modelSelect.remove(1);
    for (const model of response.data.results) {
      const option = el("option", model.name);
      option.value = String(model.id);
      modelSelect.appendChild(option);
    }
    modelSelect.value = current;
    if (modelSelect.value !== current) explainersOffer();
  }

  /** The explainer choices of the chosen model (or of the baseline), and their options. */
  function explainersOffer() {
    const current = explainerSelect.value;
    const names = modelSelect.value ? MODEL_EXPLAINERS : BASELINE_EXPLAINERS;
    explainerSelect.replaceChildren(el("option", gettext("(upload)")));
    explainerSelect.options[0].value = "";
    for (const name of names) explainerSelect.appendChild(el("option", name));
    explainerSelect.value = names.includes(current) ? current : "";
    optionsShow();
  }

  function optionsShow() {
    for (const field of optionFields) {
      field.hidden = !modelSelect.value || !(field.dataset.explainers || "").split(" ").includes(explainerSelect.value);
    }
  }

  async function loadRuns() {
    if (!select.value) return;
    const response = await api(`/api/projects/${projectId}/exports/${select.value}/runs/?limit=200`, "GET");
    // No retry here: loadExports, every ten seconds, loads the runs again.
    if (!response.ok) return loadFailed(response);
    loadRecovered();
    runs = response.data.results;
    for (const run of runs) {
      if (run.status === "pending" || run.status === "running") {
        barsFor(select.value).follow(run.id, interpolate(gettext("Run %(name)s"), run, true));
      }
    }
    render();
    if (runs.some((r) => r.status === "pending" || r.status === "running")) window.setTimeout(loadRuns, 1000);
  }

  function render() {
    const metrics = new Set();
    const flat = runs.map((run) => {
      const values = flatten(run.scores || {}, "", {});
      Object.keys(values).forEach((k) => metrics.add(k));
      return { run, values };
    });
    resultsChartDraw(chartArea, flat);
    const columns = [...RUN_COLUMNS, ...[...metrics].sort()];
    /** @param {{run: any, values: Record<string, number>}} row */
    const sortValue = (row) => sortKey === "model" ? (row.run.model_name ?? "") : RUN_COLUMNS.includes(sortKey) ? row.run[sortKey] : row.values[sortKey];
    flat.sort((a, b) => {
      const x = sortValue(a);
      const y = sortValue(b);
      if (x === undefined || y === undefined) return x === y ? 0 : x === undefined ? 1 : -1;  // missing last
      const order = x < y ? -1 : x > y ? 1 : 0;
      return sortDescending ? -order : order;
    });
    const head = el("tr");
    // Each metric's definition, read as the heading's description and shown as its tooltip.
    const definitions = el("div");
    definitions.hidden = true;
    for (const column of columns) {
      const heading = HEADINGS[column] ? { label: HEADINGS[column], definition: "" } : metricHeading(column);
      const th = el("th");
      th.dataset.key = column;
      th.scope = "col";
      if (column === sortKey) th.setAttribute("aria-sort", sortDescending ? "descending" : "ascending");
      // A button, so that the sort is reached and used from the keyboard too.
      const sort = el("button", heading.label + (column === sortKey ? (sortDescending ? " ▼" : " ▲") : ""), "column-sort");
      sort.type = "button";
      if (heading.label !== column) sort.dataset.metricKey = column;
      if (heading.definition) {
        const id = `metric-definition-${columns.indexOf(column)}`;
        definitions.appendChild(el("span", heading.definition)).id = id;
        sort.setAttribute("aria-describedby", id);
        th.title = `${heading.definition} (${column})`;
      }
      th.appendChild(sort);
      th.addEventListener("click", () => {
        sortDescending = sortKey === column ? !sortDescending : true;
        sortKey = column;
        render();
      });
      head.appendChild(th);
    }
    const body = el("tbody");
    problemsBox.replaceChildren();
    for (const { run, values } of flat) {
      const row = el("tr");
      row.dataset.status = run.status;
      row.dataset.run = run.name;
      for (const column of columns) {
        if (column === "name") row.appendChild(el("td", run.name + (run.explainer ? ` (${run.explainer})` : "")));
        else if (column === "model") row.appendChild(el("td", run.model_name ?? (run.explainer ? gettext("bag-of-words baseline") : "")));
        else if (column === "status") row.appendChild(el("td", (STATUS[run.status] ?? run.status) + (run.error ? `: ${run.error}` : "")));
        else {
          const cell = row.appendChild(el("td", column in values ? formatNumber(values[column], 2, true) : ""));
          cell.dataset.metric = column;
          if (column in values) cell.title = String(values[column]);  // the unrounded figure
        }
      }
      body.appendChild(row);
      if (run.problems && run.problems.length) {
        const list = el("ul");
        list.className = "problems";
        for (const p of run.problems) list.appendChild(el("li", `${run.name}: ${p.file}${p.line ? ":" + p.line : ""}${p.field ? " " + p.field : ""}: ${p.message}`));
        problemsBox.appendChild(list);
      }
    }
    table.replaceChildren(el("thead"), body);
    /** @type {HTMLElement} */ (table.tHead).appendChild(head);
    table.after(definitions);
    definitionsShown?.remove();
    definitionsShown = definitions;

    const variants = new Set();
    runs.forEach((r) => Object.keys(r.plausibility_by_variant || {}).forEach((v) => variants.add(v)));
    const vhead = el("tr");
    vhead.appendChild(el("th", gettext("run")));
    for (const v of [...variants].sort()) {
      vhead.appendChild(el("th", interpolate(gettext("%(variant)s: token F1 / IOU F1 / AUPRC vs majority (items)"), { variant: v }, true)));
      vhead.appendChild(el("th", interpolate(gettext("%(variant)s: top-k kappa (items)"), { variant: v }, true)));
    }
    const vbody = el("tbody");
    for (const run of runs.filter((r) => r.plausibility_by_variant)) {
      const row = el("tr");
      row.appendChild(el("td", run.name));
      for (const v of [...variants].sort()) {
        const p = run.plausibility_by_variant[v];
        const fmt = (/** @type {number|null} */ x) => formatNumber(x, 2, true);
        row.appendChild(el("td", p ? `${fmt(p.token_f1)} / ${fmt(p.iou_f1)} / ${fmt(p.auprc)} (${p.items})` : ""));
        // The instruction study's figure
        // (docs/reference/metrics.md#explainer-plausibility-per-variant); runs scored before it
        // was added lack it.
        const k = p && p.kappa_top_k;
        const cell = el("td", !k ? "" : k.reason ? interpolate(gettext("n/a: %(reason)s"), k, true) : `${fmt(k.plausibility)} (${k.items})`);
        cell.dataset.kappaVariant = v;
        if (k && !k.reason) cell.title = interpolate(gettext("%(excluded_items)s item(s) excluded (every kappa undefined), %(items_without_scores)s without soft scores"), k, true);
        row.appendChild(cell);
      }
      vbody.appendChild(row);
    }
    variantsTable.replaceChildren(el("thead"), vbody);
    /** @type {HTMLElement} */ (variantsTable.tHead).appendChild(vhead);
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const file = /** @type {File|null} */ (data.get("file"));
    if (!file || !file.name) data.delete("file");
    if (!data.get("explainer")) data.delete("explainer");
    /** @type {Record<string, number|string>} */ const options = {};
    for (const field of optionFields) {
      const input = /** @type {HTMLInputElement|HTMLSelectElement} */ (field.querySelector("input, select"));
      // A number field gives a whole number, a choice its word.
      if (!field.hidden && input.value) options[input.name] = input instanceof HTMLSelectElement ? input.value : Number(input.value);
      data.delete(input.name);
    }
    if (data.get("model")) data.set("options", JSON.stringify(options));
    else data.delete("model");
    const response = await api(`/api/projects/${projectId}/exports/${select.value}/runs/`, "POST", data);
    if (response.ok) {
      clearFormErrors(form);
      say(interpolate(gettext("Run %(name)s started."), response.data, true), false);
    } else {
      say(showFormErrors(form, response.data) || gettext("Check the fields marked in the form."), true);
    }
    loadRuns();
  });
  select.addEventListener("change", loadRuns);
  modelSelect.addEventListener("change", explainersOffer);
  explainerSelect.addEventListener("change", optionsShow);
  // The models panel registers one: it is offered here at once.
  document.addEventListener("models-changed", loadModels);
  loadModels();
  loadExports();
  window.setInterval(loadExports, 10000);
}
