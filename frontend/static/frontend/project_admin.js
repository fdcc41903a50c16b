// @ts-check
// The admin's project pages: instruction variants (Instructions), policies (Settings), members
// and progress (Workers). Each page holds some of these parts; a part runs where its elements are.
// Server strings are inserted as text only.

import { formatNumber } from "./format.js";
import { clearFormErrors, showFormErrors } from "./form_errors.js";
import { api, el, errorText } from "./http.js";

/** Roles and granularities by their API names. */
const ROLES = /** @type {Record<string, string>} */ ({
  admin: gettext("admin"),
  researcher: gettext("researcher"),
  reviewer: gettext("reviewer"),
  annotator: gettext("annotator"),
  author: gettext("perturbation author"),
  checker: gettext("perturbation checker"),
  curator: gettext("curator"),
});
const GRANULARITIES = /** @type {Record<string, string>} */ ({ word: gettext("word"), span: gettext("span") });

const found = document.getElementById("admin-panel");
if (found) {
  // Named again so the functions below see an element, not "element or null".
  const panel = found;
  const projectId = panel.dataset.projectId;
  const base = `/api/projects/${projectId}`;
  const status = /** @type {HTMLElement} */ (panel.querySelector(".admin-status"));
  /** @param {string} text @param {boolean} [bad] */
  const say = (text, bad) => { status.textContent = text; status.className = `admin-status ${bad ? "error" : "muted"}`; };

  /** A refusal's field messages under their fields; the status line gets the rest.
   * @param {HTMLFormElement} form @param {any} data @param {Record<string, string>} [fieldNames] */
  const refusal = (form, data, fieldNames) => showFormErrors(form, data, fieldNames) || gettext("Check the fields marked in the form.");

  async function loadVariants() {
    const response = await api(`${base}/variants/`, "GET");
    const tbody = panel.querySelector("#variants tbody");
    if (!tbody) return;
    tbody.replaceChildren();
    if (!response.ok) return say(errorText(response.data), true);
    for (const v of response.data) {
      const row = el("tr");
      row.appendChild(el("td", v.name));
      row.appendChild(el("td", String(v.version)));
      row.appendChild(el("td", GRANULARITIES[v.granularity] ?? v.granularity));
      row.appendChild(el("td", v.active ? gettext("active") : gettext("retired")));
      row.appendChild(el("td", v.frozen_at ? gettext("frozen (edits make a new version)") : gettext("editable")));
      const textCell = el("td");
      const area = /** @type {HTMLTextAreaElement} */ (el("textarea"));
      area.value = v.text;
      area.rows = 2;
      area.disabled = !v.active;
      area.setAttribute("aria-label", interpolate(gettext("Instruction text of %(name)s"), { name: v.name }, true));
      textCell.appendChild(area);
      row.appendChild(textCell);
      const actions = el("td");
      if (v.active) {
        const save = el("button", gettext("Save text"));
        save.addEventListener("click", async () => {
          const r = await api(`${base}/variants/${v.id}/`, "PATCH", { text: area.value });
          say(r.ok ? interpolate(gettext("Saved %(name)s as version %(version)s."), { name: v.name, version: r.data.version }, true)
            : errorText(r.data), !r.ok);
          loadVariants();
        });
        actions.appendChild(save);
      }
      row.appendChild(actions);
      tbody.appendChild(row);
    }
  }

  async function loadProgress() {
    if (!panel.querySelector("#progress-variants")) return;
    const response = await api(`${base}/progress/`, "GET");
    if (!response.ok) return say(errorText(response.data), true);
    const variants = /** @type {HTMLElement} */ (panel.querySelector("#progress-variants tbody"));
    variants.replaceChildren();
    for (const v of response.data.variants) {
      const row = el("tr");
      for (const value of [`${v.name} v${v.version}`, formatNumber(v.workers), formatNumber(v.submitted), formatNumber(v.leased),
        `${formatNumber(v.items_complete)} / ${formatNumber(v.items_total)}`]) {
        row.appendChild(el("td", value));
      }
      variants.appendChild(row);
    }
    const workers = /** @type {HTMLElement} */ (panel.querySelector("#progress-workers tbody"));
    workers.replaceChildren();
    for (const w of response.data.workers) {
      const row = el("tr");
      row.append(el("td", w.worker__username), el("td", w.variant__name ?? "–"));
      for (const value of [w.submitted, w.leased, w.skipped, w.expired]) row.appendChild(el("td", formatNumber(value)));
      workers.appendChild(row);
    }
  }

  panel.querySelector("#install-presets")?.addEventListener("click", async () => {
    const r = await api(`${base}/variants/presets/`, "POST");
    say(r.ok ? interpolate(gettext("Added %(count)s preset variant(s)."), { count: r.data.length }, true) : errorText(r.data), !r.ok);
    loadVariants();
  });

  const variantForm = /** @type {HTMLFormElement | null} */ (panel.querySelector("#variant-form"));
  variantForm?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = new FormData(variantForm);
    const r = await api(`${base}/variants/`, "POST", {
      name: form.get("name"), text: form.get("text"), granularity: form.get("granularity"),
    });
    say(r.ok ? interpolate(gettext("Created variant %(name)s."), r.data, true) : refusal(variantForm, r.data), !r.ok);
    if (r.ok) {
      variantForm.reset();
      clearFormErrors(variantForm);
    }
    loadVariants();
  });

  const policyForm = /** @type {HTMLFormElement | null} */ (panel.querySelector("#policy-form"));
  policyForm?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = new FormData(policyForm);
    /** @type {Record<string, any>} */ const body = {
      annotators_per_item: Number(form.get("annotators_per_item")),
      min_highlight: Number(form.get("min_highlight")),
      lease_seconds: Number(form.get("lease_seconds")),
      allow_variant_mixing: form.get("allow_variant_mixing") === "on",
      multi_set_mode: form.get("multi_set_mode") === "on",
      blind_annotators: form.get("blind_annotators") === "on",
      labels_from_annotators: form.get("labels_from_annotators") === "on",
    };
    if (policyForm.elements.namedItem("question_rationales")) body.question_rationales = form.get("question_rationales") === "on";
    if (policyForm.elements.namedItem("text_name_1")) {
      // Both names or neither (the defaults); one alone is refused by the server, naming the field.
      body.text_names = [form.get("text_name_1"), form.get("text_name_2")].map((n) => String(n || "").trim()).filter(Boolean);
    }
    const r = await api(`${base}/policy/`, "PATCH", body);
    if (r.ok) clearFormErrors(policyForm);
    // The two names of a pair's texts are one field of the API.
    say(r.ok ? gettext("Policies saved.") : refusal(policyForm, r.data, { text_names: "text_name_1" }), !r.ok);
  });

  const memberForm = /** @type {HTMLFormElement | null} */ (panel.querySelector("#member-form"));
  memberForm?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = new FormData(memberForm);
    const r = await api(`${base}/members/`, "POST", { username: form.get("username"), role: form.get("role") });
    // 202: not someone the admin may add directly; the server says the same whether or not
    // the name is an account's, and so does this message.
    const invited = gettext("If an account with this user name exists, it has been invited: it joins when its owner accepts.");
    say(r.status === 202 ? invited
      : r.ok ? interpolate(gettext("Added %(username)s as %(role)s."), { username: r.data.username, role: ROLES[r.data.role] ?? r.data.role }, true)
      : refusal(memberForm, r.data), !r.ok);
    if (r.ok) {
      memberForm.reset();
      clearFormErrors(memberForm);
    }
  });

  if (panel.querySelector("#variants")) loadVariants();
  if (panel.querySelector("#progress-variants")) {
    loadProgress();
    window.setInterval(loadProgress, 5000);
  }
}
