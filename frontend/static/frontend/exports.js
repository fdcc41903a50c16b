// @ts-check
// Export panel for researchers and admins: start an export, watch progress, cancel, download.
// Server strings are inserted as text only.

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
  const token = () => decodeURIComponent((document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/) || [])[1] || "");

  /** @param {string} url @param {string} method @param {any} [body] */
  async function api(url, method, body) {
    const response = await fetch(url, {
      method, credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": token() },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { ok: response.ok, data: await response.json().catch(() => null) };
  }

  /** @param {any} data */
  function problems(data) {
    if (!data) return gettext("request failed");
    if (data.problems) return data.problems.join("; ");
    if (data.detail) return data.detail;
    return Object.entries(data).map(([k, v]) => `${k}: ${[].concat(v).join(" ")}`).join("; ");
  }

  /** @param {string} tag @param {string} [text] */
  const el = (tag, text) => { const n = document.createElement(tag); if (text !== undefined) n.textContent = text; return n; };

  async function refresh() {
    const response = await api(base, "GET");
    if (!response.ok) return;
    tbody.replaceChildren();
    let busy = false;
    for (const exp of response.data.results) {
      busy = busy || exp.status === "pending" || exp.status === "running";
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
        cancel.addEventListener("click", async () => { await api(`${base}${exp.id}/cancel/`, "POST"); refresh(); });
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
    for (const key of ["variant", "annotator", "cohort"]) if (data.get(key)) body[key] = data.get(key);
    body.seed = Number(data.get("seed") || 0);
    if (body.splits === "ratios") body.ratios = String(data.get("ratios")).split(",").map(Number);
    const response = await api(base, "POST", body);
    status.textContent = response.ok ? interpolate(gettext("Export %(id)s started."), response.data, true) : problems(response.data);
    status.className = `export-status ${response.ok ? "muted" : "error"}`;
    refresh();
  });
  refresh();
}
