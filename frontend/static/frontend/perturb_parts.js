// @ts-check
// Pieces the authoring and check pages share: the type picker, a text editor with the
// live word diff against the original, the gold-result editor, and badges. Every server
// string is inserted as text.

import { el } from "./http.js";
import { countsText, showDiff } from "./word_diff.js";

/** @param {string} status */
export function statusBadge(status) {
  const words = { pending: gettext("waiting for a check"), accepted: gettext("accepted"), rejected: gettext("rejected") };
  return el("span", /** @type {any} */ (words)[status] || status, `badge ${status}`);
}

/** @param {string[]} keys @param {any[]} types */
export function typeBadges(keys, types) {
  const names = new Map(types.map((t) => [t.key, typeName(t)]));
  const box = el("span", undefined, "pt-type-badges");
  keys.forEach((key, n) => {
    if (n) box.append(" ");
    box.appendChild(el("span", names.get(key) || key, "badge type"));
  });
  return box;
}

/** The benchmark's own types in the page's language: the API names and defines them in English
 * (annotate/perturbation_types.py), in the same words as these msgids. */
const BUILTIN_TYPES = /** @type {Record<string, {name: string, description: string}>} */ ({
  dispensable_words: {
    name: gettext("Dispensable words altered"),
    description: gettext("Insert, delete or replace words that should not change the prediction or the rationale, e.g. “what are some reasons to travel alone” becomes “list some reasons to travel alone”."),
  },
  important_words: {
    name: gettext("Important words altered"),
    description: gettext("Replace words that matter for the prediction with synonyms or related words, e.g. “i hate you” becomes “i dislike you”: prediction and rationale should change with them."),
  },
  syntax: {
    name: gettext("Syntax transformed"),
    description: gettext("Transform the syntax without changing the meaning, e.g. “the customer commented the hotel” becomes “the hotel is commented by the customer”: prediction and rationale should not change."),
  },
});

/** @param {any} type */
export function typeName(type) {
  return (type.builtin && BUILTIN_TYPES[type.key]?.name) || type.name;
}

/** @param {any} type */
export function typeDescription(type) {
  return (type.builtin && BUILTIN_TYPES[type.key]?.description) || type.description;
}

/**
 * Checkbox cards, one per type, with the type's definition.
 * @param {any[]} types @param {string[]} selected @param {() => void} onChange
 */
export function typePicker(types, selected, onChange) {
  const box = el("div", undefined, "pt-types");
  /** @type {HTMLInputElement[]} */ const inputs = [];
  for (const type of types) {
    const card = /** @type {HTMLLabelElement} */ (el("label", undefined, "pt-type"));
    card.dataset.type = type.key;
    const input = /** @type {HTMLInputElement} */ (el("input"));
    input.type = "checkbox";
    input.name = "types";
    input.value = type.key;
    input.checked = selected.includes(type.key);
    const sync = () => card.classList.toggle("checked", input.checked);
    input.addEventListener("change", () => { sync(); onChange(); });
    sync();
    card.append(input, el("span", typeName(type), "name"));
    if (!type.builtin) card.append(" ", el("span", gettext("project type"), "badge neutral"));
    const description = typeDescription(type);
    if (description) card.appendChild(el("span", description, "desc"));
    inputs.push(input);
    box.appendChild(card);
  }
  return { node: box, value: () => inputs.filter((i) => i.checked).map((i) => i.value) };
}

/**
 * An editable copy of one text beside the diff of the copy against the original.
 * @param {{name: string, original: string, value: string, position: number|string, onChange: () => void}} options
 */
export function textEditor({ name, original, value, position, onChange }) {
  const box = el("div", undefined, "pt-text");
  box.dataset.position = String(position);
  const head = el("div", undefined, "pt-text-head");
  const count = el("span", "", "pt-count");
  const reset = /** @type {HTMLButtonElement} */ (el("button", gettext("Reset to original"), "secondary small"));
  reset.type = "button";
  const title = el("div");
  title.append(el("h3", name));
  head.append(title, count, reset);
  const columns = el("div", undefined, "pt-columns");
  const left = el("div");
  left.appendChild(el("div", gettext("Perturbed copy"), "col-title"));
  const area = /** @type {HTMLTextAreaElement} */ (el("textarea", undefined, "pt-editor"));
  area.value = value;
  area.dataset.position = String(position);
  area.spellcheck = true;
  area.setAttribute("aria-label", interpolate(gettext("%(name)s: perturbed copy"), { name }, true));
  left.appendChild(area);
  const right = el("div");
  right.appendChild(el("div", gettext("Changes from the original"), "col-title"));
  const diff = el("div", undefined, "pt-diff");
  diff.setAttribute("aria-live", "polite");
  right.appendChild(diff);
  columns.append(left, right);
  box.append(head, columns);
  let changed = false;
  const refresh = () => {
    const counts = showDiff(diff, original, area.value);
    changed = area.value !== original;
    count.textContent = counts.changed ? countsText(counts) : changed ? gettext("spacing only") : gettext("no change");
    count.classList.toggle("changed", counts.changed);
    reset.disabled = !changed;
    area.style.height = "auto";
    area.style.height = `${Math.max(area.scrollHeight + 4, 72)}px`;
    area.classList.remove("invalid");
  };
  area.addEventListener("input", () => { refresh(); onChange(); });
  reset.addEventListener("click", () => { area.value = original; refresh(); onChange(); });
  requestAnimationFrame(refresh);
  refresh();
  return {
    node: box,
    area,
    value: () => area.value,
    changed: () => changed,
    words: () => area.value.split(/\s+/).filter(Boolean).join(" ") !== original.split(/\s+/).filter(Boolean).join(" "),
  };
}

/** @param {any} answer */
export function answerText(answer) {
  if (!answer) return "–";
  return answer.none ? gettext("no answer") : answer.text;
}

/**
 * The gold result: a label from the allowed ones (radio chips), a free label when the
 * project has none, and for reading comprehension the answer text or "no answer".
 * @param {{taskType: string, labels: string[], original: any, label: string|null, answer: any, onChange: () => void}} options
 */
export function goldEditor({ taskType, labels, original, label, answer, onChange }) {
  const box = el("div", undefined, "pt-gold");
  const reading = taskType === "reading_comprehension";
  /** @type {() => string|null} */ let readLabel = () => null;
  if (labels.length) {
    const field = el("div", undefined, "pt-label-field");
    field.appendChild(el("div", taskType === "sentence_pair" ? gettext("Similarity label") : reading ? gettext("Label (optional)") : gettext("Label"), "col-title"));
    const choices = el("div", undefined, "pt-choices");
    choices.setAttribute("role", "radiogroup");
    /** @type {HTMLInputElement[]} */ const inputs = [];
    const sync = () => inputs.forEach((i) => i.parentElement?.classList.toggle("checked", i.checked));
    for (const name of labels) {
      const choice = el("label");
      const input = /** @type {HTMLInputElement} */ (el("input"));
      input.type = "radio";
      input.name = "label";
      input.value = name;
      input.checked = name === label;
      input.addEventListener("change", () => { sync(); onChange(); });
      choice.append(input, name);
      if (name === original.label) choice.appendChild(el("span", gettext(" · original"), "muted small"));
      inputs.push(input);
      choices.appendChild(choice);
    }
    sync();
    field.appendChild(choices);
    box.appendChild(field);
    readLabel = () => inputs.find((i) => i.checked)?.value ?? null;
  } else if (!reading) {
    const field = el("label", gettext("Label"));
    const input = /** @type {HTMLInputElement} */ (el("input"));
    input.type = "text";
    input.name = "label";
    input.value = label ?? "";
    input.addEventListener("input", onChange);
    field.appendChild(input);
    box.appendChild(field);
    readLabel = () => input.value.trim() || null;
  }
  /** @type {() => any} */ let readAnswer = () => null;
  if (reading) {
    const field = el("div", undefined, "pt-answer");
    field.appendChild(el("div", gettext("Answer in the perturbed passage"), "col-title"));
    const textLabel = el("label");
    const text = /** @type {HTMLInputElement} */ (el("input"));
    text.type = "text";
    text.name = "answer";
    text.value = answer && !answer.none ? answer.text : "";
    textLabel.append(text);
    const noneLabel = el("label");
    const none = /** @type {HTMLInputElement} */ (el("input"));
    none.type = "checkbox";
    none.name = "no_answer";
    none.checked = Boolean(answer && answer.none);
    noneLabel.append(none, gettext("the passage has no answer"));
    const sync = () => { text.disabled = none.checked; };
    none.addEventListener("change", () => { sync(); onChange(); });
    text.addEventListener("input", onChange);
    sync();
    field.append(textLabel, noneLabel, el("div", interpolate(gettext("Original: %(answer)s"), { answer: answerText(original.answer) }, true), "muted small"));
    box.appendChild(field);
    readAnswer = () => (none.checked ? { none: true } : { text: text.value });
  }
  return { node: box, label: readLabel, answer: readAnswer };
}

/** The labels an item's gold may take. @param {any} settings @param {any} original */
export function allowedLabels(settings, original) {
  if (settings.task_type === "multiple_choice" && original.options.length) return original.options;
  return settings.labels;
}

/**
 * Mark the input an error names (`field` of an API error: texts[n], types, label, answer).
 * @param {HTMLElement} root @param {any} data
 */
export function markInvalid(root, data) {
  const field = data && data.field;
  if (!field) return;
  const text = /^texts\[(\d+)\]$/.exec(field);
  /** @type {Element|null} */ let target = null;
  if (text) target = root.querySelector(`textarea[data-position="${text[1]}"]`);
  else if (field === "texts") target = root.querySelector("textarea.pt-editor");
  else if (field === "query") target = root.querySelector('textarea[data-position="query"]');
  else if (field === "types") target = root.querySelector(".pt-types");
  else if (field === "label") target = root.querySelector(".pt-choices, input[name=label]");
  else if (field === "answer") target = root.querySelector("input[name=answer]");
  if (target) {
    target.classList.add("invalid");
    /** @type {HTMLElement} */ (target).scrollIntoView({ block: "center", behavior: "smooth" });
  }
}
