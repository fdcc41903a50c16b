// @ts-check
// Quality-control page for admins: pipeline counts, review and quality policies, gold
// items, worker CSV import, the candidate queue, the worker table and the audit trail.
// Every server string is inserted as text.

import { api, el, errorText, fmt } from "./http.js";

/** Fields of the quality policy form: [name, label, kind]. */
const POLICY_FIELDS = [
  ["min_approval_rate", "Minimum approval rate (%)", "number"],
  ["max_approval_rate", "Maximum approval rate (%), to recruit one band such as 80–90", "number"],
  ["min_approved_count", "Minimum approved tasks", "number"],
  ["max_approved_count", "Maximum approved tasks", "number"],
  ["allowed_locales", "Allowed locales (comma separated, empty = any)", "list"],
  ["masters_only", "Master workers only", "bool"],
  ["test_enabled", "Require the qualification test", "bool"],
  ["test_pass_f1", "Test pass mark (mean token F1)", "number"],
  ["test_max_attempts", "Test attempts", "number"],
  ["test_instructions", "Test instructions", "text"],
  ["manual_selection", "An admin selects each candidate", "bool"],
  ["min_seconds", "Flag: faster than (seconds)", "number"],
  ["max_stopword_share", "Flag: stop-word share above", "number"],
  ["first_k_tokens", "Flag: only the first k tokens, k =", "number"],
  ["min_coannotator_kappa", "Flag: kappa with co-annotators below", "number"],
  ["aggregate_min_annotations", "Worker limits apply after (annotations)", "number"],
  ["warn_median_seconds", "Warn: median seconds below", "number"],
  ["block_median_seconds", "Block: median seconds below", "number"],
  ["warn_empty_rate", "Warn: empty rate above", "number"],
  ["block_empty_rate", "Block: empty rate above", "number"],
  ["warn_stopword_share", "Warn: stop-word share above", "number"],
  ["block_stopword_share", "Block: stop-word share above", "number"],
  ["warn_majority_kappa", "Warn: kappa with the majority below", "number"],
  ["block_majority_kappa", "Block: kappa with the majority below", "number"],
  ["auto_block", "Block automatically", "bool"],
];

const root = document.getElementById("quality");
if (root) {
  const projectId = root.dataset.projectId;
  const qc = `/api/projects/${projectId}`;
  const message = /** @type {HTMLElement} */ (root.querySelector(".message"));
  /** @param {string} text @param {boolean} [bad] */
  const say = (text, bad) => { message.textContent = text; message.className = `message ${bad ? "error" : "ok"}`; };

  /** @param {HTMLTableElement} table @param {string[]} headers @param {Array<Array<string|Node>>} rows */
  function fill(table, headers, rows) {
    table.replaceChildren();
    const head = el("tr");
    headers.forEach((h) => head.appendChild(el("th", h)));
    table.appendChild(head);
    for (const row of rows) {
      const tr = el("tr");
      row.forEach((cell, i) => {
        const td = el("td");
        td.dataset.column = headers[i];
        if (cell instanceof Node) td.appendChild(cell); else td.textContent = cell;
        tr.appendChild(td);
      });
      table.appendChild(tr);
    }
  }

  /** @param {string} id */
  const table = (id) => /** @type {HTMLTableElement} */ (document.getElementById(id));

  async function loadPipeline() {
    const response = await api(`${qc}/pipeline/`, "GET");
    if (!response.ok) return say(errorText(response.data), true);
    const p = response.data;
    const stages = ["submitted", "in_review", "revising", "accepted", "discarded"];
    fill(table("pipeline-stages"), stages.map((s) => s.replace("_", " ")), [stages.map((s) => String(p.stages[s]))]);
    fill(table("pipeline-rounds"), ["Round", ...stages.map((s) => s.replace("_", " "))],
      Object.entries(p.by_round).map(([round, counts]) => [round, ...stages.map((s) => String(/** @type {any} */ (counts)[s] || 0))]));
    fill(table("pipeline-flags"), ["Flag", "Annotations"], Object.entries(p.flags).map(([k, n]) => [k.replace("_", " "), String(n)]));
  }

  /** @type {HTMLFormElement} */
  const policyForm = /** @type {HTMLFormElement} */ (document.getElementById("quality-policy"));
  async function loadPolicy() {
    const response = await api(`${qc}/quality-policy/`, "GET");
    if (!response.ok) return say(errorText(response.data), true);
    const policy = response.data;
    policyForm.replaceChildren();
    for (const [name, label, kind] of POLICY_FIELDS) {
      const wrap = el("label", `${label} `);
      const input = /** @type {HTMLInputElement} */ (el(kind === "text" ? "textarea" : "input"));
      input.name = name;
      if (kind === "bool") { input.type = "checkbox"; input.checked = Boolean(policy[name]); }
      else if (kind === "number") { input.type = "number"; input.step = "any"; input.value = policy[name] ?? ""; }
      else if (kind === "list") input.value = (policy[name] || []).join(", ");
      else input.value = policy[name] ?? "";
      wrap.appendChild(input);
      policyForm.appendChild(wrap);
    }
    const save = /** @type {HTMLButtonElement} */ (el("button", "Save qualification and flags"));
    save.type = "submit";
    policyForm.appendChild(save);
    const gold = /** @type {HTMLInputElement} */ (document.querySelector("#gold-form [name=annotation_ids]"));
    gold.value = policy.gold_items.join(", ");
  }

  policyForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    /** @type {Record<string, any>} */ const body = {};
    for (const [name, , kind] of POLICY_FIELDS) {
      const input = /** @type {HTMLInputElement} */ (policyForm.elements.namedItem(name));
      if (kind === "bool") body[name] = input.checked;
      else if (kind === "number") body[name] = input.value === "" ? null : Number(input.value);
      else if (kind === "list") body[name] = input.value.split(",").map((s) => s.trim()).filter(Boolean);
      else body[name] = input.value;
    }
    const response = await api(`${qc}/quality-policy/`, "PATCH", body);
    say(response.ok ? "Qualification and flag settings saved." : errorText(response.data), !response.ok);
  });

  document.getElementById("review-policy")?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = /** @type {HTMLFormElement} */ (event.target);
    const body = Object.fromEntries([...new FormData(form).entries()].map(([k, v]) => [k, Number(v)]));
    const response = await api(`/api/projects/${projectId}/policy/`, "PATCH", body);
    say(response.ok ? "Review policy saved." : errorText(response.data), !response.ok);
    if (response.ok) loadPipeline();
  });

  document.getElementById("gold-form")?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = /** @type {HTMLFormElement} */ (event.target);
    const ids = String(new FormData(form).get("annotation_ids") || "").split(",").map((s) => s.trim()).filter(Boolean);
    const response = await api(`${qc}/gold-items/`, "PUT", { annotation_ids: ids });
    say(response.ok ? `Gold items: ${response.data.gold_items.join(", ")}.` : errorText(response.data), !response.ok);
  });

  document.getElementById("worker-import")?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = /** @type {HTMLFormElement} */ (event.target);
    const response = await api(`${qc}/workers/import/`, "POST", new FormData(form));
    say(response.ok
      ? `Worker attributes imported: ${response.data.created} new, ${response.data.updated} updated, ${response.data.linked} linked to accounts.`
      : errorText(response.data), !response.ok);
    if (response.ok) { form.reset(); loadWorkers(); }
  });

  /** @param {Record<string, number[]>} tokens */
  const tokenList = (tokens) => Object.entries(tokens).map(([doc, ids]) => `${doc}: ${ids.join(" ")}`).join("; ") || "(none)";

  async function loadCandidates() {
    const response = await api(`${qc}/candidates/`, "GET");
    const box = /** @type {HTMLElement} */ (document.getElementById("candidates"));
    if (!response.ok) return say(errorText(response.data), true);
    box.replaceChildren();
    if (!response.data.candidates.length) box.appendChild(el("p", "No candidates are waiting.", "muted"));
    for (const c of response.data.candidates) {
      const card = el("div", undefined, "candidate");
      card.dataset.worker = c.username;
      card.appendChild(el("h3", `${c.username} — ${c.status}`));
      card.appendChild(el("p", c.reason, "muted"));
      for (const attempt of c.attempts) {
        card.appendChild(el("p", `Attempt ${attempt.number}: mean F1 ${fmt(attempt.mean_f1)}${attempt.passed === null ? " (in progress)" : attempt.passed ? " (passed)" : " (failed)"}`));
        const answers = el("table", undefined, "grid");
        fill(/** @type {HTMLTableElement} */ (answers), ["Item", "F1", "Seconds", "Flags", "Highlighted", "Gold"],
          attempt.answers.map((/** @type {any} */ a) => [a.item, fmt(a.f1), fmt(a.seconds, 1), a.flags.join("; ") || "none", tokenList(a.tokens), tokenList(a.gold)]));
        card.appendChild(answers);
      }
      for (const [accept, label] of [[true, "Accept"], [false, "Reject"]]) {
        const button = /** @type {HTMLButtonElement} */ (el("button", /** @type {string} */ (label)));
        button.type = "button";
        button.addEventListener("click", async () => {
          const reason = window.prompt(`${label} ${c.username}: why?`) ?? "";
          const result = await api(`${qc}/candidates/${c.worker_id}/decision/`, "POST", { accept, reason });
          say(result.ok ? `${c.username} is now ${result.data.status}.` : errorText(result.data), !result.ok);
          loadCandidates(); loadWorkers(); loadAudit();
        });
        card.appendChild(button);
      }
      box.appendChild(card);
    }
  }

  async function loadWorkers() {
    const response = await api(`${qc}/workers/`, "GET");
    if (!response.ok) return say(errorText(response.data), true);
    const rows = response.data.workers.map((/** @type {any} */ w) => {
      const a = w.aggregates || {};
      const p = w.profile || {};
      const action = /** @type {HTMLButtonElement} */ (el("button", w.status === "blocked" ? "Unblock" : "Block"));
      action.type = "button";
      action.addEventListener("click", async () => {
        const verb = w.status === "blocked" ? "unblock" : "block";
        const reason = window.prompt(`Why ${verb} ${w.username}?`);
        if (!reason) return;
        const result = await api(`${qc}/workers/${w.worker_id}/${verb}/`, "POST", { reason });
        say(result.ok ? `${w.username} is now ${result.data.status}.` : errorText(result.data), !result.ok);
        loadWorkers(); loadAudit();
      });
      const status = el("span", w.status, `status-${w.status}`);
      const warnings = el("span", (w.warnings || []).join("; "), "warning");
      return [w.username, status, fmt(p.approval_rate, 1), fmt(p.approved_count), p.locale || "", p.is_master ? "yes" : "",
        fmt(a.annotations), fmt(a.median_seconds, 1), fmt(a.empty_rate), fmt(a.stopword_share), fmt(a.majority_kappa),
        Object.entries(w.flags).map(([k, n]) => `${k} ${n}`).join(", "),
        Object.entries(w.verdicts).map(([k, n]) => `${k} ${n}`).join(", "), warnings, action];
    });
    fill(table("workers"), ["Worker", "Status", "Approval %", "Approved", "Locale", "Master", "Annotations", "Median s",
      "Empty rate", "Stop-word share", "Kappa vs majority", "Flags", "Verdicts", "Warnings", ""], rows);
  }

  async function loadAudit() {
    const response = await api(`${qc}/audit/`, "GET");
    if (!response.ok) return;
    fill(table("audit"), ["When", "Action", "Worker", "By", "Why"],
      response.data.events.map((/** @type {any} */ e) => [new Date(e.at).toLocaleString(), e.action, e.worker, e.actor, e.reason]));
  }

  Promise.all([loadPipeline(), loadPolicy(), loadCandidates(), loadWorkers(), loadAudit()]).then(() => {
    root.dataset.ready = "true";
  });
}
