// @ts-check
// Export panel for researchers and admins: start an export, watch progress, cancel, download.
// Server strings are inserted as text only.

import { clearFormErrors, showFormErrors } from "./form_errors.js";
import { api, el, errorText } from "./http.js";
import { jobProgressList } from "./progress.js";

/** Job statuses and phases by their API names. */
const STATUS = /** @type {Record<string, string>} */ ({
  pending: gettext("pending"),
  running: gettext("running"),
  succeeded: gettext("succeeded"),
  failed: gettext("failed"),
  cancelled: gettext("cancelled"),
});
const PHASE = /** @type {Record<string, string>} */ ({
  queued: gettext("queued"),
  instances: gettext("instances"),
  documents: gettext("documents"),
  done: gettext("done"),
});

const panel = document.getElementById("export-panel");
if (panel) {
  const base = `/api/projects/${panel.dataset.projectId}/exports/`;
  const form = /** @type {HTMLFormElement} */ (panel.querySelector("#export-form"));
  const status = /** @type {HTMLElement} */ (panel.querySelector(".export-status"));
  const tbody = /** @type {HTMLElement} */ (panel.querySelector("#exports tbody"));
  // A live bar for each export still running: counts, time left, then its download or error.
  const live = el("div");
  status.after(live);
  const bars = jobProgressList(live, {
    url: (id) => `${base}${id}/progress/`,
    onFinal: () => refresh(),
    resultLabel: gettext("Download"),
  });
  /** @param {string} text @param {boolean} failed */
  function say(text, failed) {
    status.textContent = text;
    status.className = `export-status ${failed ? "error" : "muted"}`;
  }
  /** Whether the line shows a failed poll, which the next good poll takes away. */
  let showingLoadError = false;

  async function refresh() {
    const response = await api(base, "GET");
    // A failed poll keeps polling: the jobs run on the server whether or not the page hears.
    if (!response.ok) {
      say(errorText(response.data), true);
      showingLoadError = true;
      window.setTimeout(refresh, 5000);
      return;
    }
    if (showingLoadError) say("", false);
    showingLoadError = false;
    tbody.replaceChildren();
    let busy = false;
    for (const exp of response.data.results) {
      busy = busy || exp.status === "pending" || exp.status === "running";
      if (exp.status === "pending" || exp.status === "running") {
        bars.follow(exp.id, interpolate(gettext("Export %(id)s"), { id: exp.id }, true));
      }
      const row = el("tr");
      row.dataset.status = exp.status;
      row.appendChild(el("td", String(exp.id)));
      row.appendChild(el("td", `${exp.params.selection} / ${exp.params.aggregation}${exp.params.variant ? " / " + exp.params.variant : ""}${exp.params.cohort ? " / " + exp.params.cohort : ""}`));
      row.appendChild(el("td", (STATUS[exp.status] ?? exp.status) + (exp.error ? `: ${exp.error}` : "")));
      const phase = PHASE[exp.phase] ?? exp.phase;
      row.appendChild(el("td", exp.progress_total ? `${phase} ${exp.progress_done}/${exp.progress_total}` : phase));
      const result = el("td");
      if (exp.download_url) {
        const link = /** @type {HTMLAnchorElement} */ (el("a", gettext("download")));
        link.href = exp.download_url;
        result.appendChild(link);
        result.appendChild(el("div", `sha256 ${exp.sha256}`)).className = "muted mono";
      }
      if (exp.status === "pending" || exp.status === "running") {
        const cancel = el("button", gettext("Cancel"));
        cancel.addEventListener("click", async () => {
          const response = await api(`${base}${exp.id}/cancel/`, "POST");
          if (!response.ok) say(errorText(response.data), true);
          refresh();
        });
        result.appendChild(cancel);
      }
      row.appendChild(result);
      tbody.appendChild(row);
    }
    if (busy) window.setTimeout(refresh, 1000);
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    /** @type {Record<string, any>} */ const body = {};
    for (const key of ["selection", "aggregation", "splits", "layout", "archive"]) body[key] = data.get(key);
    // item_filter: the data manager's query string ("Export this view" links here with it).
    for (const key of ["variant", "annotator", "cohort", "item_filter"]) if (data.get(key)) body[key] = data.get(key);
    body.seed = Number(data.get("seed") || 0);
    if (body.splits === "ratios") body.ratios = String(data.get("ratios")).split(",").map(Number);
    const response = await api(base, "POST", body);
    if (response.ok) {
      clearFormErrors(form);
      say(interpolate(gettext("Export %(id)s started."), response.data, true), false);
    } else {
      say(showFormErrors(form, response.data) || gettext("Check the fields marked in the form."), true);
    }
    refresh();
  });
  refresh();
}
