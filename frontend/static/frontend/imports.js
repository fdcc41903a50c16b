// Import panel: upload a file, then poll the job list until every job has finished.
// Everything from the server is inserted as text (textContent), never as markup.
(function () {
  "use strict";
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
  if (!panel) return;
  const projectId = panel.dataset.projectId;
  const base = `/api/projects/${projectId}/imports/`;
  const tbody = panel.querySelector("#import-jobs tbody");
  const form = panel.querySelector("#import-form");

  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function cell(row, text) {
    const td = document.createElement("td");
    td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function describe(job) {
    if (job.status === "succeeded") {
      const s = job.summary;
      return interpolate(gettext("%(items_created)s items, %(documents_created)s documents created; %(items_unchanged)s items already present"), s, true);
    }
    if (job.status === "failed") {
      const lines = job.problems.slice(0, 20).map(
        (p) => `${p.file}${p.line ? ":" + p.line : ""}${p.field ? " " + p.field : ""}: ${p.message}`);
      return [job.error].concat(lines).join("\n");
    }
    return "";
  }

  function render(jobs) {
    tbody.replaceChildren();
    for (const job of jobs) {
      const row = document.createElement("tr");
      row.dataset.status = job.status;
      cell(row, String(job.id));
      cell(row, job.source_name);
      cell(row, STATUS[job.status] || job.status);
      const p = job.progress || {};
      const phase = PHASE[p.phase] || p.phase || "";
      cell(row, p.total ? `${phase} ${p.done}/${p.total}` : phase);
      cell(row, describe(job)).className = "pre";
      tbody.appendChild(row);
    }
  }

  async function refresh() {
    const response = await fetch(base, { credentials: "same-origin" });
    if (!response.ok) return;
    const body = await response.json();
    render(body.results);
    if (body.results.some((j) => j.status === "pending" || j.status === "running")) {
      setTimeout(refresh, 1000);
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const response = await fetch(base, {
      method: "POST",
      body: new FormData(form),
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken() },
    });
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      alert(body.detail || JSON.stringify(body));
    }
    form.reset();
    refresh();
  });

  refresh();
})();
