// @ts-check
// The results board's models panel (the project's registered models, and the admins' form to
// register one) and its comparison: the finished runs of every export, one row per model and
// explainer, one column per export (the gold it holds), one chosen metric in the cells.
// Server strings are inserted as text only.

import { confirmAction } from "./confirm_dialog.js";
import { formatNumber } from "./format.js";
import { clearFormErrors, showFormErrors } from "./form_errors.js";
import { api, el, errorText } from "./http.js";
import { metricHeading } from "./metric_names.js";

/** What an export's evidences are, by its aggregation's API name. */
const GOLD = /** @type {Record<string, string>} */ ({
  reference: gettext("reference sets"),
  accepted_sets: gettext("accepted sets"),
  curated: gettext("curated gold"),
  majority: gettext("majority vote"),
  union: gettext("union"),
  all_sets: gettext("every annotator's sets"),
  annotator: gettext("one annotator"),
});

/** Numeric leaves of a run's scores and plausibility: "token_prf.instance_macro.f1" -> number.
 * @param {any} value @param {string} path @param {Record<string, number>} out */
function flatten(value, path, out) {
  if (typeof value === "number") {
    out[path] = value;
    return out;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      const label = v && typeof v === "object" && "threshold" in v ? `@${v.threshold}` : `[${i}]`;
      if (typeof v === "object") flatten(v, `${path}${label}`, out);
    });
    return out;
  }
  if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) if (k !== "threshold" && k !== "details") flatten(v, path ? `${path}.${k}` : k, out);
  }
  return out;
}

const panel = document.getElementById("models-panel");
if (panel) {
  const projectId = panel.dataset.projectId;
  const body = /** @type {HTMLTableSectionElement} */ (panel.querySelector("#models tbody"));
  const form = /** @type {HTMLFormElement | null} */ (panel.querySelector("#model-form"));
  const status = /** @type {HTMLElement | null} */ (panel.querySelector(".model-status"));
  const isAdmin = panel.hasAttribute("data-admin");

  async function loadModels() {
    const response = await api(`/api/projects/${projectId}/models/?limit=200`, "GET");
    if (!response.ok) return;
    body.replaceChildren();
    for (const model of response.data.results) {
      const row = el("tr");
      row.dataset.model = model.name;
      row.appendChild(el("td", model.name));
      row.appendChild(el("td", model.labels.join(", ")));
      row.appendChild(el("td", Object.entries(model.label_mapping).map(([p, m]) => `${p} → ${m}`).join(", ")));
      row.appendChild(el("td", model.folder));
      row.appendChild(el("td", model.registered_by ?? ""));
      if (isAdmin) {
        const remove = /** @type {HTMLButtonElement} */ (el("button", gettext("Delete"), "secondary"));
        remove.type = "button";
        remove.setAttribute("aria-label", interpolate(gettext("Delete model %(name)s"), model, true));
        remove.addEventListener("click", () => deleteModel(model));
        row.appendChild(el("td")).appendChild(remove);
      }
      body.appendChild(row);
    }
  }

  /** Asks, then deletes; a model with runs is deleted with them only after a second,
   * explicit question naming how many. @param {{id: number, name: string}} model */
  async function deleteModel(model) {
    const first = await confirmAction({
      title: interpolate(gettext("Delete model %(name)s?"), model, true),
      message: gettext("It is no longer offered for new runs. A folder you named stays in the storage; an uploaded zip's files are removed."),
      confirmLabel: gettext("Delete"),
      danger: true,
    });
    if (!first.confirmed) return;
    const url = `/api/projects/${projectId}/models/${model.id}/`;
    let response = await api(url, "DELETE");
    if (!response.ok && response.data?.code === "model_has_runs") {
      const second = await confirmAction({
        title: interpolate(gettext("Delete model %(name)s and its runs?"), model, true),
        message: interpolate(
          ngettext("The model has %(runs)s run. Its scores and predictions are deleted with it.", "The model has %(runs)s runs. Their scores and predictions are deleted with it.", response.data.runs),
          { runs: response.data.runs },
          true,
        ),
        confirmLabel: gettext("Delete the model and its runs"),
        danger: true,
      });
      if (!second.confirmed) return;
      response = await api(`${url}?runs=delete`, "DELETE");
    }
    if (status) {
      status.textContent = response.ok
        ? interpolate(ngettext("Model %(name)s deleted, with %(runs)s run.", "Model %(name)s deleted, with %(runs)s runs.", response.data.runs_deleted), { name: model.name, runs: response.data.runs_deleted }, true)
        : errorText(response.data);
      status.className = `model-status ${response.ok ? "muted" : "error"}`;
    }
    if (response.ok) document.dispatchEvent(new Event("models-changed"));
  }

  form?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const file = /** @type {File|null} */ (data.get("file"));
    if (!file || !file.name) data.delete("file");
    if (!data.get("folder")) data.delete("folder");
    /** @type {Record<string, string>} */ const mapping = {};
    for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (form.querySelectorAll("[data-project-label]"))) {
      if (input.value.trim()) mapping[input.dataset.projectLabel || ""] = input.value.trim();
    }
    if (Object.keys(mapping).length) data.set("label_mapping", JSON.stringify(mapping));
    const response = await api(`/api/projects/${projectId}/models/`, "POST", data);
    if (status) {
      status.textContent = response.ok
        ? interpolate(gettext("Model %(name)s registered."), response.data, true)
        : showFormErrors(form, response.data) || errorText(response.data);
      status.className = `model-status ${response.ok ? "muted" : "error"}`;
    }
    if (response.ok) {
      clearFormErrors(form);
      form.reset();
      document.dispatchEvent(new Event("models-changed"));
    }
    loadModels();
  });
  document.addEventListener("models-changed", loadModels);
  loadModels();
}

const compare = document.getElementById("run-compare");
if (compare) {
  const projectId = compare.dataset.projectId;
  const form = /** @type {HTMLFormElement} */ (compare.querySelector("#compare-form"));
  const table = /** @type {HTMLTableElement} */ (compare.querySelector("#compare-table"));
  const status = /** @type {HTMLElement} */ (compare.querySelector(".compare-status"));
  const modelSelect = /** @type {HTMLSelectElement} */ (form.elements.namedItem("model"));
  const explainerSelect = /** @type {HTMLSelectElement} */ (form.elements.namedItem("explainer"));
  const metricSelect = /** @type {HTMLSelectElement} */ (form.elements.namedItem("metric"));
  /** @type {any[]} */ let rows = [];

  /** @param {HTMLSelectElement} select @param {[string, string][]} choices @param {number} fixed */
  function offer(select, choices, fixed) {
    const current = select.value;
    while (select.options.length > fixed) select.remove(fixed);
    for (const [value, text] of choices) {
      const option = el("option", text);
      option.value = value;
      select.appendChild(option);
    }
    select.value = current;
    if (select.value !== current) select.selectedIndex = 0;
  }

  async function loadModels() {
    const response = await api(`/api/projects/${projectId}/models/?limit=200`, "GET");
    if (response.ok) offer(modelSelect, response.data.results.map((/** @type {any} */ m) => [String(m.id), m.name]), 2);
  }

  async function load() {
    const query = new URLSearchParams();
    for (const name of ["model", "explainer", "split"]) {
      const value = /** @type {HTMLSelectElement} */ (form.elements.namedItem(name)).value;
      if (value) query.set(name, value);
    }
    const response = await api(`/api/projects/${projectId}/runs/compare/?${query}`, "GET");
    if (!response.ok) {
      status.textContent = errorText(response.data);
      status.className = "compare-status error";
      return;
    }
    status.textContent = "";
    rows = response.data.map((/** @type {any} */ run) => ({ run, values: flatten({ ...run.scores, plausibility_by_variant: run.plausibility_by_variant }, "", {}) }));
    if (!explainerSelect.value) {
      const names = [...new Set(rows.map((r) => r.run.explainer).filter(Boolean))].sort();
      offer(explainerSelect, names.map((n) => [n, n]), 1);
    }
    const metrics = [...new Set(rows.flatMap((r) => Object.keys(r.values)))].sort();
    offer(metricSelect, metrics.map((m) => [m, metricHeading(m).label]), 0);
    if (!metricSelect.value && metrics.length) metricSelect.value = metrics.includes("token_prf.instance_macro.f1") ? "token_prf.instance_macro.f1" : metrics[0];
    render();
  }

  /** @param {any} run */
  const rowName = (run) => `${run.model_name ?? gettext("bag-of-words baseline")} · ${run.explainer || gettext("upload")}`;
  /** @param {any} gold */
  const goldName = (gold) => `#${gold.export} ${GOLD[gold.aggregation] ?? gold.aggregation}${gold.variant ? ` (${gold.variant})` : ""}`;

  function render() {
    const metric = metricSelect.value;
    /** @type {Map<string, any>} */ const golds = new Map();
    /** @type {Map<string, Map<string, {run: any, values: Record<string, number>}>>} */ const cells = new Map();
    // Newest first from the server: a cell keeps the newest run of its model, explainer and export.
    for (const row of rows) {
      const gold = String(row.run.gold.export);
      golds.set(gold, row.run.gold);
      const name = rowName(row.run);
      if (!cells.has(name)) cells.set(name, new Map());
      const line = /** @type {Map<string, any>} */ (cells.get(name));
      if (!line.has(gold)) line.set(gold, row);
    }
    const head = el("tr");
    head.appendChild(el("th", gettext("model · explainer"))).scope = "col";
    const columns = [...golds.keys()].sort((a, b) => Number(a) - Number(b));
    for (const gold of columns) head.appendChild(el("th", goldName(golds.get(gold)))).scope = "col";
    const tbody = el("tbody");
    for (const name of [...cells.keys()].sort()) {
      const tr = el("tr");
      tr.dataset.row = name;
      tr.appendChild(el("th", name)).scope = "row";
      for (const gold of columns) {
        const found = cells.get(name)?.get(gold);
        const value = found ? found.values[metric] : undefined;
        const td = tr.appendChild(el("td", value === undefined ? "" : formatNumber(value, 3, true)));
        td.dataset.gold = gold;
        if (found) td.title = `${found.run.name} (${found.run.split})${value === undefined ? "" : `: ${value}`}`;
      }
      tbody.appendChild(tr);
    }
    table.replaceChildren(el("thead"), tbody);
    /** @type {HTMLElement} */ (table.tHead).appendChild(head);
    if (!rows.length) status.textContent = gettext("No finished run matches.");
  }

  form.addEventListener("change", (event) => {
    if (event.target === metricSelect) render();
    else load();
  });
  document.addEventListener("models-changed", loadModels);
  loadModels();
  load();
  window.setInterval(load, 15000);
}
