// @ts-check
// Quality-control page for admins: pipeline counts, review and quality policies, gold
// items, worker CSV import, the candidate queue, the worker table and the audit trail.
// Every server string is inserted as text.

import { formatDateTime } from "./format.js";
import { api, el, errorText, fmt } from "./http.js";
import { goldPicker } from "./gold_picker.js";
import { jobProgressList } from "./progress.js";
import { answerBesideGold } from "./test_answers.js";
import { FLAG_NAMES as FLAGS } from "./flag_names.js";

/** Fields of the quality policy form: [name, label, kind]. */
const POLICY_FIELDS = [
  ["min_approval_rate", gettext("Minimum approval rate (%)"), "number"],
  ["max_approval_rate", gettext("Maximum approval rate (%), to recruit one band such as 80–90"), "number"],
  ["min_approved_count", gettext("Minimum approved tasks"), "number"],
  ["max_approved_count", gettext("Maximum approved tasks"), "number"],
  ["allowed_locales", gettext("Allowed locales (comma separated, empty = any)"), "list"],
  ["masters_only", gettext("Master workers only"), "bool"],
  ["test_enabled", gettext("Require the qualification test"), "bool"],
  ["test_pass_f1", gettext("Test pass mark (mean token F1)"), "number"],
  ["test_max_attempts", gettext("Test attempts"), "number"],
  ["test_instructions", gettext("Test instructions"), "text"],
  ["manual_selection", gettext("An admin selects each candidate"), "bool"],
  ["min_seconds", gettext("Flag: faster than (seconds)"), "number"],
  ["max_stopword_share", gettext("Flag: stop-word share above"), "number"],
  ["first_k_tokens", gettext("Flag: only the first k tokens, k ="), "number"],
  ["min_coannotator_kappa", gettext("Flag: kappa with co-annotators below"), "number"],
  ["aggregate_min_annotations", gettext("Worker limits apply after (annotations)"), "number"],
  ["warn_median_seconds", gettext("Warn: median seconds below"), "number"],
  ["block_median_seconds", gettext("Block: median seconds below"), "number"],
  ["warn_empty_rate", gettext("Warn: empty rate above"), "number"],
  ["block_empty_rate", gettext("Block: empty rate above"), "number"],
  ["warn_stopword_share", gettext("Warn: stop-word share above"), "number"],
  ["block_stopword_share", gettext("Block: stop-word share above"), "number"],
  ["warn_majority_kappa", gettext("Warn: kappa with the majority below"), "number"],
  ["block_majority_kappa", gettext("Block: kappa with the majority below"), "number"],
  ["auto_block", gettext("Block automatically"), "bool"],
];

/** The form's sections, each a few related fields with what they decide. The worker
 * limits pair each measure's warning with its block, on one row. */
const POLICY_SECTIONS = [
  { title: gettext("Who may join"), about: gettext("Read from the workers' platform records; empty means no rule."),
    fields: ["min_approval_rate", "max_approval_rate", "min_approved_count", "max_approved_count", "allowed_locales", "masters_only"] },
  { title: gettext("Qualification test"), about: gettext("Gold items a candidate annotates before real work; pass on the mean token F1."),
    fields: ["test_enabled", "test_pass_f1", "test_max_attempts", "manual_selection", "test_instructions"] },
  { title: gettext("Flags on each submission"), about: gettext("Checked after every submit; a flag marks the annotation, it blocks nobody."),
    fields: ["min_seconds", "max_stopword_share", "first_k_tokens", "min_coannotator_kappa"], presets: true },
  { title: gettext("Worker limits"), about: gettext("Over each worker's annotations so far: a warning first, then a block."),
    fields: ["aggregate_min_annotations", "auto_block"], presets: true,
    pairs: [
      [gettext("Median seconds per item below"), "warn_median_seconds", "block_median_seconds"],
      [gettext("Share of empty annotations above"), "warn_empty_rate", "block_empty_rate"],
      [gettext("Stop-word share above"), "warn_stopword_share", "block_stopword_share"],
      [gettext("Kappa with the majority below"), "warn_majority_kappa", "block_majority_kappa"],
    ] },
];

/** Starting points for the flags and limits: the form is filled, nothing is saved until the
 * admin saves. "Standard" is the platform's default; "lenient" suits slow, careful or expert
 * work (few false alarms, no automatic block), "strict" an open crowd. */
const POLICY_PRESETS = /** @type {Record<string, {label: string, values: Record<string, number|boolean>}>} */ ({
  lenient: { label: gettext("Lenient"), values: {
    min_seconds: 5, max_stopword_share: 0.75, first_k_tokens: 3, min_coannotator_kappa: 0,
    aggregate_min_annotations: 10, warn_median_seconds: 8, block_median_seconds: 2, warn_empty_rate: 0.2,
    block_empty_rate: 0.5, warn_stopword_share: 0.55, block_stopword_share: 0.85, warn_majority_kappa: 0.15,
    block_majority_kappa: -0.1, auto_block: false } },
  standard: { label: gettext("Standard"), values: {
    min_seconds: 10, max_stopword_share: 0.6, first_k_tokens: 3, min_coannotator_kappa: 0.1,
    aggregate_min_annotations: 5, warn_median_seconds: 15, block_median_seconds: 5, warn_empty_rate: 0.1,
    block_empty_rate: 0.3, warn_stopword_share: 0.4, block_stopword_share: 0.7, warn_majority_kappa: 0.3,
    block_majority_kappa: 0, auto_block: true } },
  strict: { label: gettext("Strict"), values: {
    min_seconds: 15, max_stopword_share: 0.5, first_k_tokens: 3, min_coannotator_kappa: 0.2,
    aggregate_min_annotations: 5, warn_median_seconds: 20, block_median_seconds: 8, warn_empty_rate: 0.05,
    block_empty_rate: 0.2, warn_stopword_share: 0.35, block_stopword_share: 0.6, warn_majority_kappa: 0.4,
    block_majority_kappa: 0.1, auto_block: true } },
});

/** Column headers by key: the key stays in data-column (English, for scripts and tests). */
const COLUMNS = /** @type {Record<string, string>} */ ({
  "submitted": gettext("submitted"),
  "in review": gettext("in review"),
  "revising": gettext("revising"),
  "accepted": gettext("accepted"),
  "discarded": gettext("discarded"),
  "Round": gettext("Round"),
  "Flag": gettext("Flag"),
  "Annotations": gettext("Annotations"),
  "Item": gettext("Item"),
  "F1": gettext("F1"),
  "Seconds": gettext("Seconds"),
  "Flags": gettext("Flags"),
  "Highlighted": gettext("Highlighted"),
  "Gold": gettext("Gold"),
  "Worker": gettext("Worker"),
  "Status": gettext("Status"),
  "Approval %": gettext("Approval %"),
  "Approved": gettext("Approved"),
  "Locale": gettext("Locale"),
  "Master": gettext("Master"),
  "Median s": gettext("Median s"),
  "Empty rate": gettext("Empty rate"),
  "Stop-word share": gettext("Stop-word share"),
  "Kappa vs majority": gettext("Kappa vs majority"),
  "Verdicts": gettext("Verdicts"),
  "Warnings": gettext("Warnings"),
  "When": gettext("When"),
  "Action": gettext("Action"),
  "By": gettext("By"),
  "Why": gettext("Why"),
});
/** Worker statuses, verdicts and audit actions by their API names. */
const STATUSES = /** @type {Record<string, string>} */ ({
  active: gettext("active"),
  blocked: gettext("blocked"),
  testing: gettext("testing"),
  pending: gettext("pending"),
  qualified: gettext("qualified"),
  rejected: gettext("rejected"),
});
const VERDICTS = /** @type {Record<string, string>} */ ({
  accepted: gettext("accepted"),
  revise: gettext("revise"),
  discarded: gettext("discarded"),
});
const ACTIONS = /** @type {Record<string, string>} */ ({
  accept: gettext("accept"),
  reject: gettext("reject"),
  block: gettext("block"),
  unblock: gettext("unblock"),
});
/** @param {Record<string, string>} names @param {string} key */
const named = (names, key) => names[key] ?? key;
/** "name n, name n" of a {key: count} object. @param {Record<string, string>} names @param {Record<string, number>} counts */
const countList = (names, counts) => Object.entries(counts).map(([k, n]) => `${named(names, k)} ${n}`).join(gettext(", "));

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
    headers.forEach((h) => head.appendChild(el("th", COLUMNS[h] ?? h)));
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
    fill(table("pipeline-flags"), ["Flag", "Annotations"], Object.entries(p.flags).map(([k, n]) => [named(FLAGS, k), String(n)]));
  }

  const pickerRoot = document.getElementById("gold-picker");
  const picker = pickerRoot ? goldPicker(pickerRoot, qc, say) : null;
  /** @type {HTMLFormElement} */
  const policyForm = /** @type {HTMLFormElement} */ (document.getElementById("quality-policy"));
  async function loadPolicy() {
    const response = await api(`${qc}/quality-policy/`, "GET");
    if (!response.ok) return say(errorText(response.data), true);
    const policy = response.data;
    policyForm.replaceChildren();
    const fields = Object.fromEntries(POLICY_FIELDS.map(([name, label, kind]) => [name, { label, kind }]));
    /** An input of the policy, filled with its saved value. @param {string} name @param {string} [accessibleName] */
    const input = (name, accessibleName) => {
      const { kind } = fields[name];
      const field = /** @type {HTMLInputElement} */ (el(kind === "text" ? "textarea" : "input"));
      field.name = name;
      if (kind === "bool") { field.type = "checkbox"; field.checked = Boolean(policy[name]); }
      else if (kind === "number") { field.type = "number"; field.step = "any"; field.value = policy[name] ?? ""; }
      else if (kind === "list") field.value = (policy[name] || []).join(", ");
      else field.value = policy[name] ?? "";
      if (accessibleName) field.setAttribute("aria-label", accessibleName);
      return field;
    };
    for (const section of POLICY_SECTIONS) {
      const box = el("fieldset", undefined, "policy-section");
      box.append(el("legend", section.title), el("p", section.about, "muted policy-about"));
      if (section.presets) {
        const presets = el("div", undefined, "policy-presets");
        presets.append(el("span", gettext("Fill with:"), "muted"));
        for (const [key, preset] of Object.entries(POLICY_PRESETS)) {
          const button = /** @type {HTMLButtonElement} */ (el("button", preset.label, "secondary"));
          button.type = "button";
          button.dataset.preset = key;
          button.addEventListener("click", () => {
            for (const [name, value] of Object.entries(preset.values)) {
              const field = /** @type {HTMLInputElement | null} */ (policyForm.elements.namedItem(name));
              if (!field) continue;
              if (typeof value === "boolean") field.checked = value;
              else field.value = String(value);
            }
            say(interpolate(gettext("The %(preset)s flags and limits are filled in: save to apply them."), { preset: preset.label }, true));
          });
          presets.append(button);
        }
        box.append(presets);
      }
      const grid = el("div", undefined, "policy-grid");
      for (const name of section.fields) {
        const wrap = el("label", `${fields[name].label} `);
        wrap.appendChild(input(name));
        grid.appendChild(wrap);
      }
      box.append(grid);
      if (section.pairs) {
        const table = el("table", undefined, "grid policy-limits");
        const head = el("tr");
        head.append(el("th", gettext("Measure")), el("th", gettext("Warn when")), el("th", gettext("Block when")));
        table.append(el("thead"), el("tbody"));
        /** @type {HTMLElement} */ (table.tHead).append(head);
        for (const [measure, warn, block] of section.pairs) {
          const row = el("tr");
          const warnCell = el("td");
          warnCell.append(input(warn, fields[warn].label));
          const blockCell = el("td");
          blockCell.append(input(block, fields[block].label));
          row.append(el("th", measure), warnCell, blockCell);
          table.tBodies[0].append(row);
        }
        box.append(table);
      }
      policyForm.appendChild(box);
    }
    const save = /** @type {HTMLButtonElement} */ (el("button", gettext("Save qualification and flags")));
    save.type = "submit";
    policyForm.appendChild(save);
    picker?.show(policy.gold_items);
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
    say(response.ok ? gettext("Qualification and flag settings saved.") : errorText(response.data), !response.ok);
  });

  document.getElementById("review-policy")?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = /** @type {HTMLFormElement} */ (event.target);
    /** @type {Record<string, number>} */ const body = {};
    for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (form.querySelectorAll("input[name]"))) {
      // A threshold such as 8/3 shows as 2.67; left as shown, the exact value is kept.
      const exact = input.dataset.exact;
      body[input.name] = exact !== undefined && input.value === input.defaultValue ? Number(exact) : Number(input.value);
    }
    const response = await api(`/api/projects/${projectId}/policy/`, "PATCH", body);
    say(response.ok ? gettext("Review policy saved.") : errorText(response.data), !response.ok);
    if (response.ok) loadPipeline();
  });


  // The CSV is imported in the background; its bar follows the rows checked, then written.
  /** @type {ReturnType<typeof jobProgressList>|null} */ let workerImports = null;
  document.getElementById("worker-import")?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = /** @type {HTMLFormElement} */ (event.target);
    const response = await api(`${qc}/workers/import-jobs/`, "POST", new FormData(form));
    if (!response.ok) return say(errorText(response.data), true);
    if (!workerImports) {
      const area = el("div");
      form.after(area);
      workerImports = jobProgressList(area, {
        url: (id) => `${qc}/workers/import-jobs/${id}/progress/`,
        async onFinal(p) {
          const job = await api(`${qc}/workers/import-jobs/${p.id}/`, "GET");
          if (!job.ok) return say(errorText(job.data), true);
          if (job.data.status === "succeeded") {
            say(interpolate(gettext("Worker attributes imported: %(created)s new, %(updated)s updated, %(linked)s linked to accounts."), job.data.summary, true), false);
            loadWorkers();
          } else {
            say([job.data.error, ...job.data.problems.slice(0, 20)].join("\n"), true);
          }
        },
      });
    }
    workerImports.follow(response.data.id, interpolate(gettext("Worker import %(id)s: %(name)s"), { id: response.data.id, name: response.data.source_name }, true));
    form.reset();
  });


  async function loadCandidates() {
    const response = await api(`${qc}/candidates/`, "GET");
    const box = /** @type {HTMLElement} */ (document.getElementById("candidates"));
    if (!response.ok) return say(errorText(response.data), true);
    box.replaceChildren();
    if (!response.data.candidates.length) box.appendChild(el("p", gettext("No candidates are waiting."), "muted"));
    for (const c of response.data.candidates) {
      const card = el("div", undefined, "candidate");
      card.dataset.worker = c.username;
      card.appendChild(el("h3", `${c.username} — ${named(STATUSES, c.status)}`));
      card.appendChild(el("p", c.reason, "muted"));
      for (const attempt of c.attempts) {
        const values = { number: attempt.number, f1: fmt(attempt.mean_f1) };
        card.appendChild(el("p", interpolate(attempt.passed === null ? gettext("Attempt %(number)s: mean F1 %(f1)s (in progress)")
          : attempt.passed ? gettext("Attempt %(number)s: mean F1 %(f1)s (passed)")
            : gettext("Attempt %(number)s: mean F1 %(f1)s (failed)"), values, true)));
        for (const a of attempt.answers) {
          const answer = el("section", undefined, "test-answer");
          answer.dataset.item = a.item;
          const head = el("h4", undefined, "test-answer-head");
          head.append(
            el("span", interpolate(gettext("Item %(item)s"), { item: a.item }, true), "test-answer-item"),
            el("span", interpolate(gettext("F1 %(f1)s"), { f1: fmt(a.f1) }, true), "badge test-answer-f1"),
            el("span", interpolate(gettext("%(seconds)s s"), { seconds: fmt(a.seconds, 1) }, true), "muted"),
            el("span", a.flags.map((/** @type {string} */ f) => named(FLAGS, f)).join("; ") || gettext("no flags"), a.flags.length ? "warning" : "muted"),
          );
          answer.append(head, answerBesideGold(a));
          card.appendChild(answer);
        }
      }
      // Accept is the one primary action; Reject stands apart, outlined, so the two are never
      // one slip of the pointer away from each other.
      const decisions = el("div", undefined, "decision-actions");
      for (const [accept, label, question] of [
        [true, gettext("Accept"), gettext("Accept %(username)s: why?")],
        [false, gettext("Reject"), gettext("Reject %(username)s: why?")],
      ]) {
        const button = /** @type {HTMLButtonElement} */ (
          el("button", /** @type {string} */ (label), accept ? "decision-accept" : "secondary decision-reject")
        );
        button.type = "button";
        button.addEventListener("click", async () => {
          const reason = window.prompt(interpolate(/** @type {string} */ (question), c, true)) ?? "";
          const result = await api(`${qc}/candidates/${c.worker_id}/decision/`, "POST", { accept, reason });
          say(result.ok ? interpolate(gettext("%(username)s is now %(status)s."), { username: c.username, status: named(STATUSES, result.data.status) }, true)
            : errorText(result.data), !result.ok);
          loadCandidates(); loadWorkers(); loadAudit();
        });
        decisions.appendChild(button);
      }
      card.appendChild(decisions);
      box.appendChild(card);
    }
  }

  async function loadWorkers() {
    const response = await api(`${qc}/workers/`, "GET");
    if (!response.ok) return say(errorText(response.data), true);
    const rows = response.data.workers.map((/** @type {any} */ w) => {
      const a = w.aggregates || {};
      const p = w.profile || {};
      const action = /** @type {HTMLButtonElement} */ (el("button", w.status === "blocked" ? gettext("Unblock") : gettext("Block")));
      action.type = "button";
      action.addEventListener("click", async () => {
        const verb = w.status === "blocked" ? "unblock" : "block";
        const reason = window.prompt(interpolate(verb === "block" ? gettext("Why block %(username)s?") : gettext("Why unblock %(username)s?"), w, true));
        if (!reason) return;
        const result = await api(`${qc}/workers/${w.worker_id}/${verb}/`, "POST", { reason });
        say(result.ok ? interpolate(gettext("%(username)s is now %(status)s."), { username: w.username, status: named(STATUSES, result.data.status) }, true)
          : errorText(result.data), !result.ok);
        loadWorkers(); loadAudit();
      });
      const status = el("span", named(STATUSES, w.status), `status-${w.status}`);
      const warnings = el("span", (w.warnings || []).join("; "), "warning");
      return [w.username, status, fmt(p.approval_rate, 1), fmt(p.approved_count), p.locale || "", p.is_master ? gettext("yes") : "",
        fmt(a.annotations), fmt(a.median_seconds, 1), fmt(a.empty_rate), fmt(a.stopword_share), fmt(a.majority_kappa),
        countList(FLAGS, w.flags), countList(VERDICTS, w.verdicts), warnings, action];
    });
    fill(table("workers"), ["Worker", "Status", "Approval %", "Approved", "Locale", "Master", "Annotations", "Median s",
      "Empty rate", "Stop-word share", "Kappa vs majority", "Flags", "Verdicts", "Warnings", ""], rows);
  }

  async function loadAudit() {
    const response = await api(`${qc}/audit/`, "GET");
    if (!response.ok) return say(errorText(response.data), true);
    fill(table("audit"), ["When", "Action", "Worker", "By", "Why"],
      response.data.events.map((/** @type {any} */ e) => [formatDateTime(e.at), named(ACTIONS, e.action), e.worker, e.actor, e.reason]));
  }

  Promise.all([loadPipeline(), loadPolicy(), loadCandidates(), loadWorkers(), loadAudit()]).then(() => {
    root.dataset.ready = "true";
  });
}
