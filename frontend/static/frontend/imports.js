// Import panel: upload a file, then poll the job list until every job has finished.
// Everything from the server is inserted as text (textContent), never as markup.
(function () {
  "use strict";
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
      return `${s.items_created} items, ${s.documents_created} documents created; ` +
        `${s.items_unchanged} items already present`;
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
      cell(row, job.status);
      const p = job.progress || {};
      cell(row, p.total ? `${p.phase} ${p.done}/${p.total}` : (p.phase || ""));
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
