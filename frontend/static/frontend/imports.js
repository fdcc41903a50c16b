// @ts-check
// Import panel: upload a file, then poll the job list until every job has finished.
// Everything from the server is inserted as text (textContent), never as markup.

import { formatDateTime, formatNumber } from "./format.js";
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
      const actions = el("td");
      if (job.status === "succeeded" || job.status === "failed") actions.append(deleteButton(job));
      row.append(actions);
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
    loadDeleted();
    if (response.data.results.some((/** @type {any} */ j) => j.status === "pending" || j.status === "running")) {
      window.setTimeout(refresh, 1000);
    }
  }

  // ------------------------------------------------------------ delete and restore

  const projectBase = `/api/projects/${panel.dataset.projectId}/`;
  const deletedSection = /** @type {HTMLElement} */ (document.getElementById("deleted-panel"));

  /** @param {any} job */
  function deleteButton(job) {
    const button = el("button", gettext("Delete"), "danger small");
    button.type = "button";
    button.addEventListener("click", async () => {
      const question = interpolate(gettext("Delete import %(id)s (%(name)s) with its items and everything annotated on them? They disappear from every page, queue, figure and export at once; you can restore them from the Deleted section below for %(days)s days. Exports already written are kept."),
        { id: job.id, name: job.source_name, days: deletedSection.dataset.restoreDays }, true);
      if (!window.confirm(question)) return;
      button.disabled = true;
      const r = await api(`${base}${job.id}/delete/`, "POST");
      button.disabled = false;
      if (!r.ok) return say(errorText(r.data), true);
      say(interpolate(ngettext("Import %(id)s deleted with %(count)s item.", "Import %(id)s deleted with %(count)s items.", r.data.items), { id: job.id, count: r.data.items }, true), false);
      refresh();
    });
    return button;
  }

  /** "7 days left" (whole days from two days on, then hours), the exact moment in the title.
   * @param {string} until */
  function timeLeft(until) {
    const hours = Math.max(0, (new Date(until).getTime() - Date.now()) / 3_600_000);
    const text = hours >= 48
      ? interpolate(ngettext("%(count)s day left", "%(count)s days left", Math.round(hours / 24)), { count: Math.round(hours / 24) }, true)
      : interpolate(ngettext("%(count)s hour left", "%(count)s hours left", Math.ceil(hours)), { count: Math.ceil(hours) }, true);
    const cellNode = el("td", text);
    cellNode.title = interpolate(gettext("restorable until %(when)s"), { when: formatDateTime(until) }, true);
    return cellNode;
  }

  /** @param {string} url @param {any} body @param {string} done */
  async function restore(url, body, done) {
    const r = await api(url, "POST", body);
    if (!r.ok) return say(errorText(r.data), true);
    say(interpolate(done, { count: r.data.items }, true), false);
    refresh();
  }

  async function loadDeleted() {
    const r = await api(`${projectBase}deleted/`, "GET");
    if (!r.ok) return;
    const data = r.data;
    deletedSection.dataset.restoreDays = String(data.restore_days);
    deletedSection.hidden = !data.imports.length && !data.items_count;
    const importRows = /** @type {HTMLElement} */ (deletedSection.querySelector("#deleted-imports tbody"));
    importRows.replaceChildren(...data.imports.map((/** @type {any} */ job) => {
      const row = el("tr");
      row.dataset.importId = String(job.id);
      const button = el("button", gettext("Restore"), "secondary small");
      button.type = "button";
      button.addEventListener("click", () => restore(`${base}${job.id}/restore/`, undefined,
        ngettext("Restored with %(count)s item.", "Restored with %(count)s items.", job.items)));
      const actions = el("td");
      actions.append(button);
      row.append(el("td", String(job.id)), el("td", job.source_name), el("td", formatNumber(job.items)),
        el("td", interpolate(gettext("%(when)s by %(who)s"), { when: formatDateTime(job.deleted_at), who: job.deleted_by ?? gettext("(deleted account)") }, true)),
        timeLeft(job.restorable_until), actions);
      return row;
    }));
    /** @type {HTMLElement} */ (deletedSection.querySelector("#deleted-imports")).hidden = !data.imports.length;
    const itemsBlock = /** @type {HTMLElement} */ (deletedSection.querySelector("#deleted-items"));
    itemsBlock.hidden = !data.items_count;
    const itemRows = /** @type {HTMLElement} */ (itemsBlock.querySelector("tbody"));
    itemRows.replaceChildren(...data.items.map((/** @type {any} */ item) => {
      const row = el("tr");
      const button = el("button", gettext("Restore"), "secondary small");
      button.type = "button";
      button.addEventListener("click", () => restore(`${projectBase}items/restore/`, { ids: [item.id] },
        ngettext("%(count)s item restored.", "%(count)s items restored.", 1)));
      const actions = el("td");
      actions.append(button);
      row.append(el("td", item.annotation_id), el("td", formatDateTime(item.deleted_at)), timeLeft(item.restorable_until), actions);
      return row;
    }));
    /** @type {HTMLElement} */ (itemsBlock.querySelector(".deleted-items-count")).textContent = data.items_count > data.items.length
      ? interpolate(gettext("%(shown)s of %(count)s deleted items shown, newest first."), { shown: data.items.length, count: data.items_count }, true)
      : "";
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
