// @ts-check
// Import panel: upload a file, then poll the job list until every job has finished.
// Everything from the server is inserted as text (textContent), never as markup.

import { formatNumber } from "./format.js";
import { hfMapping } from "./hf_mapping.js";
import { api, el, errorText } from "./http.js";
import { jobProgressList } from "./progress.js";

/** Job statuses and phases by their API names. */
const STATUS = /** @type {Record<string, string>} */ ({
  pending: gettext("pending"),
  running: gettext("running"),
  succeeded: gettext("succeeded"),
  failed: gettext("failed"),
});
const PHASE = /** @type {Record<string, string>} */ ({
  queued: gettext("queued"),
  reading: gettext("reading"),
  validating: gettext("validating"),
  writing: gettext("writing"),
  documents: gettext("documents"),
  done: gettext("done"),
});

const panel = document.getElementById("import-panel");
if (panel) {
  const base = `/api/projects/${panel.dataset.projectId}/imports/`;
  const tbody = /** @type {HTMLElement} */ (panel.querySelector("#import-jobs tbody"));
  const form = /** @type {HTMLFormElement} */ (panel.querySelector("#import-form"));
  const status = /** @type {HTMLElement} */ (panel.querySelector(".import-status"));
  const columns = hfMapping(form, `${base}hf-mapping/`, panel.dataset.taskType === "sentence_pair");
  // A live bar for each import still running: counts, time left, then how it ended.
  const live = el("div");
  status.after(live);
  const bars = jobProgressList(live, { url: (id) => `${base}${id}/progress/`, onFinal: () => refresh() });
  /** Whether the line shows a failed poll, which the next good poll takes away. */
  let showingLoadError = false;

  /** @param {string} text @param {boolean} failed */
  const say = (text, failed) => {
    status.textContent = text;
    status.className = `import-status ${failed ? "error" : "muted"}`;
  };

  /** @param {HTMLElement} row @param {string} text */
  const cell = (row, text) => row.appendChild(el("td", text));

  /** @param {any} job */
  function describe(job) {
    if (job.status === "succeeded") {
      return interpolate(gettext("%(items_created)s items, %(documents_created)s documents created; %(items_unchanged)s items already present"), job.summary, true);
    }
    if (job.status === "failed") {
      const lines = job.problems.slice(0, 20).map(
        (/** @type {any} */ p) => `${p.file}${p.line ? ":" + p.line : ""}${p.field ? " " + p.field : ""}: ${p.message}`);
      return [job.error].concat(lines).join("\n");
    }
    return "";
  }

  /** @param {any[]} jobs */
  function render(jobs) {
    tbody.replaceChildren();
    for (const job of jobs) {
      if (job.status === "pending" || job.status === "running") {
        bars.follow(job.id, interpolate(gettext("Import %(id)s: %(name)s"), { id: job.id, name: job.source_name }, true));
      }
      const row = el("tr");
      row.dataset.status = job.status;
      cell(row, String(job.id));
      cell(row, job.source_name);
      cell(row, STATUS[job.status] || job.status);
      const p = job.progress || {};
      const phase = PHASE[p.phase] || p.phase || "";
      cell(row, p.total ? `${phase} ${formatNumber(p.done)}/${formatNumber(p.total)}` : phase);
      cell(row, describe(job)).className = "pre";
      tbody.appendChild(row);
    }
  }

  async function refresh() {
    const response = await api(base, "GET");
    if (!response.ok) {
      // Polled again: an import runs on the server whether or not the page hears about it.
      say(errorText(response.data), true);
      showingLoadError = true;
      window.setTimeout(refresh, 5000);
      return;
    }
    if (showingLoadError) say("", false);
    showingLoadError = false;
    render(response.data.results);
    if (response.data.results.some((/** @type {any} */ j) => j.status === "pending" || j.status === "running")) {
      window.setTimeout(refresh, 1000);
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = new FormData(form);
    const mapping = columns.mapping();
    if (mapping) body.append("mapping", JSON.stringify(mapping));
    const response = await api(base, "POST", body);
    if (!response.ok) {
      say(errorText(response.data), true);
      // The file stays chosen when the upload never arrived, so that Import can be pressed again.
      if (response.networkError) return;
    }
    form.reset();
    columns.reset();
    refresh();
  });

  refresh();
}
