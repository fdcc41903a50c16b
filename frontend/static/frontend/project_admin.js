// @ts-check
// The admin's project pages: instruction variants (Instructions), policies (Settings), members
// and progress (Workers). Each page holds some of these parts; a part runs where its elements are.
// Server strings are inserted as text only.

import { exampleFromNotation, exampleToNotation } from "./example_notation.js";
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

  /** A variant's example annotations, shown and edited as lines such as
   * "The [acting] was [superb] ." (a highlighted token in brackets), each with its label
   * and note; saved with the variant's text. @param {any} variant */
  function examplesEditor(variant) {
    const box = /** @type {HTMLDetailsElement} */ (el("details", undefined, "variant-examples"));
    const summary = el("summary");
    const list = el("ol", undefined, "variant-example-list");
    const count = () => { summary.textContent = interpolate(gettext("Examples (%(count)s)"), { count: list.children.length }, true); };
    /** @param {any} example */
    const addRow = (example) => {
      const item = el("li", undefined, "variant-example");
      const line = /** @type {HTMLInputElement} */ (el("input"));
      line.name = "example";
      line.value = exampleToNotation(example);
      line.disabled = !variant.active;
      line.setAttribute("aria-label", gettext("Example: the tokens, each highlighted one in [brackets]"));
      const label = /** @type {HTMLInputElement} */ (el("input"));
      label.name = "example-label";
      label.value = example.label ?? "";
      label.placeholder = gettext("label");
      label.disabled = !variant.active;
      label.setAttribute("aria-label", gettext("Example label"));
      const note = /** @type {HTMLInputElement} */ (el("input"));
      note.name = "example-note";
      note.value = example.note ?? "";
      note.placeholder = gettext("note (optional)");
      note.disabled = !variant.active;
      note.setAttribute("aria-label", gettext("Example note"));
      item.append(line, label, note);
      if (variant.active) {
        const remove = /** @type {HTMLButtonElement} */ (el("button", gettext("Remove"), "secondary"));
        remove.type = "button";
        remove.addEventListener("click", () => { item.remove(); count(); });
        item.append(remove);
      }
      list.append(item);
      count();
    };
    for (const example of variant.examples || []) addRow(example);
    box.append(summary, list);
    if (variant.active) {
      const add = /** @type {HTMLButtonElement} */ (el("button", gettext("Add an example"), "secondary"));
      add.type = "button";
      add.addEventListener("click", () => {
        addRow({ tokens: [], highlighted: [] });
        box.open = true;
        /** @type {HTMLInputElement} */ (list.lastElementChild?.querySelector("input[name=example]"))?.focus();
      });
      box.append(add);
    }
    box.open = Boolean(variant.examples?.length);
    count();
    return {
      element: box,
      /** The examples as the API takes them; a blank line is dropped. */
      value: () => [...list.querySelectorAll("li")].map((item) => {
        const field = (/** @type {string} */ name) => /** @type {HTMLInputElement} */ (item.querySelector(`input[name=${name}]`)).value.trim();
        const { tokens, highlighted } = exampleFromNotation(field("example"));
        /** @type {Record<string, any>} */ const example = { tokens, highlighted };
        if (field("example-label")) example.label = field("example-label");
        if (field("example-note")) example.note = field("example-note");
        return example;
      }).filter((example) => example.tokens.length > 0),
    };
  }

  /** Which finished explainer run's top-k tokens the variant shows its annotators as
   * suggestions (k empty: the run's hard rationale size), or none. @param {any} variant */
  function suggestionsEditor(variant) {
    const box = el("fieldset", undefined, "suggestions-editor");
    box.appendChild(el("legend", gettext("Model suggestions")));
    const current = variant.suggestions;
    box.appendChild(el("p", current
      ? interpolate(gettext("Shows the top %(k)s tokens of explainer run %(run)s."), current, true)
      : gettext("Shows no suggestions."), "muted suggestions-state"));
    const run = /** @type {HTMLInputElement} */ (el("input"));
    run.type = "number";
    run.min = "1";
    run.name = "run";
    run.value = current ? String(current.run) : "";
    run.setAttribute("aria-label", interpolate(gettext("Explainer run of %(name)s"), { name: variant.name }, true));
    run.placeholder = gettext("run id");
    const k = /** @type {HTMLInputElement} */ (el("input"));
    k.type = "number";
    k.min = "1";
    k.name = "k";
    k.value = current ? String(current.k) : "";
    k.setAttribute("aria-label", interpolate(gettext("Tokens suggested per item for %(name)s"), { name: variant.name }, true));
    k.placeholder = gettext("k (default: the run's)");
    /** @param {any} body */
    const send = async (body) => {
      const r = await api(`${base}/variants/${variant.id}/suggestions/`, "PUT", body);
      say(r.ok ? interpolate(gettext("Saved %(name)s as version %(version)s."), { name: variant.name, version: r.data.version }, true)
        : errorText(r.data), !r.ok);
      if (r.ok) loadVariants();
    };
    const show = el("button", gettext("Show suggestions"));
    show.addEventListener("click", () => send({ run: run.value ? Number(run.value) : null, k: k.value ? Number(k.value) : null }));
    const none = el("button", gettext("Show none"), "secondary");
    none.addEventListener("click", () => send({ run: null }));
    box.append(run, k, show);
    if (current) box.appendChild(none);
    return box;
  }

  async function loadVariants() {
    const response = await api(`${base}/variants/`, "GET");
    const tbody = panel.querySelector("#variants tbody");
    if (!tbody) return;
    tbody.replaceChildren();
    if (!response.ok) return say(errorText(response.data), true);
    presetsButtonShow(response.data.map((/** @type {any} */ v) => v.name));
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
      const examples = examplesEditor(v);
      textCell.appendChild(examples.element);
      if (v.active) textCell.appendChild(suggestionsEditor(v));
      row.appendChild(textCell);
      const actions = el("td");
      if (v.active) {
        const save = el("button", gettext("Save text and examples"));
        save.addEventListener("click", async () => {
          const r = await api(`${base}/variants/${v.id}/`, "PATCH", { text: area.value, examples: examples.value() });
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

  /** Once every study preset is a variant, the button steps back: outlined, disabled, saying so.
   * @param {string[]} names the project's variant names */
  function presetsButtonShow(names) {
    const button = /** @type {HTMLButtonElement | null} */ (panel.querySelector("#install-presets"));
    if (!button) return;
    const presets = (button.dataset.presetNames || "").split(",").filter(Boolean);
    const all = presets.length > 0 && presets.every((name) => names.includes(name));
    button.disabled = all;
    button.classList.toggle("secondary", all);
    button.textContent = all ? gettext("All seven study presets are variants") : gettext("Add the seven study presets");
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
