// @ts-check
// Reviewer queue: one annotation at a time, read-only highlights, scores per rationale set
// (sufficiency, compactness) and per annotation (comprehensiveness), earlier rounds and
// what changed since the last one. Every server string is inserted as text.

import { formatDateTime } from "./format.js";
import { api, el, errorText, fmt } from "./http.js";
import { FLAG_NAMES, flagName } from "./flag_names.js";
import { shortcutsOpen } from "./shortcuts_dialog.js";
import { codeUnitsOf } from "./text_offsets.js";

const SCALES = {
  sufficiency: [[1, gettext("cannot support")], [2, gettext("not sure")], [3, gettext("can support")]],
  compactness: [[1, gettext("redundant tokens")], [2, gettext("disturbing tokens")], [3, gettext("not sure")], [4, gettext("concise")]],
  comprehensiveness: [[1, gettext("not comprehensive")], [2, gettext("not sure")], [3, gettext("comprehensive")]],
};
/** The review properties and verdicts by their API names. */
const PROPERTY_NAMES = /** @type {Record<string, string>} */ ({
  sufficiency: gettext("sufficiency"),
  compactness: gettext("compactness"),
  comprehensiveness: gettext("comprehensiveness"),
});
const OUTCOMES = /** @type {Record<string, string>} */ ({
  accepted: gettext("accepted"),
  revise: gettext("revise"),
  discarded: gettext("discarded"),
});
/** @param {string[]} properties */
const propertyList = (properties) => properties.map((p) => PROPERTY_NAMES[p] || p).join(gettext(", "));
/** @param {string} outcome */
const outcomeName = (outcome) => OUTCOMES[outcome] || outcome;
const COLOURS = 6;
const QUEUE_PAGE = 20;
/** The key that picks a scale, then a digit picks its score. */
const SCALE_KEYS = /** @type {Record<string, "sufficiency"|"compactness"|"comprehensiveness">} */ ({
  s: "sufficiency",
  c: "compactness",
  w: "comprehensiveness",
});
/** @type {import("./shortcuts_dialog.js").ShortcutRow[]} */
const SHORTCUTS = [
  [["s", "1…3"], gettext("Sufficiency of the set shown")],
  [["c", "1…4"], gettext("Compactness of the set shown")],
  [["w", "1…3"], gettext("Comprehensiveness of the whole annotation")],
  [["[", "]"], gettext("Show the previous or next set")],
  [["a"], gettext("Accept: every score at its top (Enter submits)")],
  [["b"], gettext("Send back: every score at its lowest (Enter submits)")],
  [["m"], gettext("Write the comment for the annotator (Esc leaves it)")],
  [["Enter"], gettext("Submit the scores")],
  [["n"], gettext("Next annotation in the queue, without scoring this one")],
  [[",", "."], gettext("Previous or next annotation of the same item, to compare")],
  [["?"], gettext("Show these shortcuts")],
  [["Esc"], gettext("Close this dialog")],
];

/** @param {string} name @param {string} legend @param {Array<Array<number|string>>} scale */
function radioGroup(name, legend, scale) {
  const box = el("fieldset", undefined, "scale");
  box.appendChild(el("legend", legend));
  for (const [value, words] of scale) {
    const label = el("label");
    const input = /** @type {HTMLInputElement} */ (el("input"));
    input.type = "radio";
    input.name = name;
    input.value = String(value);
    input.required = true;
    label.append(input, ` ${value} ${words}`);
    box.appendChild(label);
  }
  return box;
}

/** What the project calls its texts, by task type and the project's names.
 * @param {any} project @param {number} count */
function textNames(project, count) {
  const given = project.text_names || [];
  return Array.from({ length: count }, (_, n) => {
    const number = { n: n + 1 };
    if (project.task_type === "sentence_pair") return given[n] || interpolate(gettext("Text %(n)s"), number, true);
    if (project.task_type === "reading_comprehension") {
      return count > 1 ? interpolate(gettext("Passage %(n)s"), number, true) : gettext("Passage");
    }
    if (project.task_type === "multiple_choice") return gettext("Question");
    return count > 1 ? interpolate(gettext("Text %(n)s"), number, true) : gettext("Text");
  });
}

/**
 * The documents, read-only, each under its name. With `focus` set, only that set's tokens
 * are highlighted (its fill, underline and number) and the other sets' are dimmed; without
 * it, every set is drawn. `diff` marks tokens added since the last round and strikes
 * through removed ones.
 * @param {any} project @param {any[]} documents @param {any[]} sets
 * @param {{focus?: number|null, diff?: any}} [options]
 */
function renderDocuments(project, documents, sets, options = {}) {
  const focus = options.focus ?? null;
  const diff = options.diff;
  const box = el("div", undefined, `documents${project.task_type === "sentence_pair" ? " pair" : ""}`);
  const texts = documents.filter((doc) => doc.role !== "question");
  const names = textNames(project, texts.length);
  const ordered = [...documents.filter((doc) => doc.role === "question"), ...texts];
  for (const doc of ordered) {
    const panel = el("section", undefined, `panel ${doc.role === "question" ? "question-panel" : "doc-panel"}`);
    const head = el("header", undefined, "panel-head");
    head.appendChild(el("h3", doc.role === "question" ? gettext("Question") : names[texts.indexOf(doc)], "panel-title"));
    panel.appendChild(head);
    const view = el("div", undefined, "document");
    view.dataset.docid = doc.docid;
    if (project.language) view.lang = project.language;
    const changes = (diff && diff[doc.docid]) || { added: [], removed: [] };
    const added = new Set(changes.added);
    const removed = new Set(changes.removed);
    /** @param {number} n @param {number} i */
    const inSet = (n, i) => n >= 0 && n < sets.length && (sets[n].tokens[doc.docid] || []).includes(i);
    let previous = 0;
    // The server's offsets count code points; the text is sliced in UTF-16 units.
    const at = codeUnitsOf(doc.text);
    doc.tokens.forEach((/** @type {number[]} */ [from, to], /** @type {number} */ i) => {
      const start = at(from), end = at(to);
      if (start > previous) view.appendChild(document.createTextNode(doc.text.slice(previous, start)));
      const token = el("span", doc.text.slice(start, end), "tok readonly");
      token.dataset.i = String(i);
      const inSets = sets.map((_, n) => (inSet(n, i) ? n : -1)).filter((n) => n >= 0);
      const shown = focus === null ? inSets[0] : inSets.includes(focus) ? focus : undefined;
      if (shown !== undefined) {
        token.classList.add("sel", `set-${shown % COLOURS}`);
        token.dataset.setNumber = String(shown + 1);
        if (!inSet(shown, i - 1)) token.classList.add("run-start");
        if (focus === null && inSets.length > 1) token.classList.add("multi");
      } else if (inSets.length) {
        token.classList.add("dimmed");
      }
      if (inSets.length) {
        token.title = inSets.map((n) => interpolate(gettext("set %(set)s"), { set: n + 1 }, true)).join(gettext(", "));
      }
      if (added.has(i)) token.classList.add("added");
      if (removed.has(i)) token.classList.add("removed");
      view.appendChild(token);
      previous = end;
    });
    if (previous < doc.text.length) view.appendChild(document.createTextNode(doc.text.slice(previous)));
    panel.appendChild(view);
    box.appendChild(panel);
  }
  return box;
}

/** The gold the annotator worked from, in the task type's words. @param {any} a */
function goldFacts(a) {
  const facts = el("div", undefined, "facts-row gold-facts");
  const item = a.item;
  const task = a.project.task_type;
  const hasQuestionDoc = item.documents.some((/** @type {any} */ doc) => doc.role === "question");
  /** @param {string} name @param {string} value @param {string} cls */
  const fact = (name, value, cls) => {
    const box = el("div", undefined, `fact ${cls}`);
    box.append(el("span", name, "fact-name"), el("span", value, "fact-value"));
    facts.appendChild(box);
  };
  if (item.query && !hasQuestionDoc && !(task === "multiple_choice" && (item.options || []).length)) {
    fact(gettext("Question"), item.query, "query");
  }
  if (task === "reading_comprehension") {
    const answer = item.answer;
    fact(gettext("Gold answer"), answer && "none" in answer ? gettext("no answer in the passage")
      : answer ? answer.text : gettext("(none)"), "gold-label");
  } else if (task === "multiple_choice" && (item.options || []).length) {
    fact(gettext("Options"), item.options.join(" · "), "options-fact");
    fact(gettext("Right option"), item.label ?? gettext("(none)"), "gold-label");
  } else {
    fact(gettext("Gold label"), item.label ?? gettext("(none)"), "gold-label");
  }
  if (a.label !== null && a.label !== undefined && a.label !== "") {
    const word = task === "reading_comprehension" ? gettext("Annotator's answer")
      : task === "multiple_choice" ? gettext("Annotator's option") : gettext("Annotator's label");
    fact(word, a.label, "annotator-label");
  }
  return facts;
}

/** @param {any[]} reviews */
function reviewsTable(reviews) {
  const table = el("table", undefined, "grid");
  const head = el("tr");
  [gettext("Reviewer"), gettext("Set"), gettext("Sufficiency"), gettext("Compactness"), gettext("Comprehensiveness"),
    gettext("Comment")].forEach((h) => head.appendChild(el("th", h)));
  table.appendChild(head);
  for (const review of reviews) {
    review.sets.forEach((/** @type {any} */ set, /** @type {number} */ n) => {
      const row = el("tr");
      [review.reviewer, interpolate(gettext("Set %(set)s"), { set: set.position + 1 }, true), fmt(set.sufficiency), fmt(set.compactness),
        n === 0 ? fmt(review.comprehensiveness) : "", [set.comment, n === 0 ? review.comment : ""].filter(Boolean).join(" · ")]
        .forEach((text) => row.appendChild(el("td", text)));
      table.appendChild(row);
    });
  }
  return table;
}

class ReviewQueue {
  /** @param {HTMLElement} root */
  constructor(root) {
    this.root = root;
    this.projectId = root.dataset.projectId;
    this.body = /** @type {HTMLElement} */ (root.querySelector(".review-body"));
    this.message = /** @type {HTMLElement} */ (root.querySelector(".message"));
    /** @type {any} */ this.current = null;
    /** @type {{tabs: HTMLElement, documents: HTMLElement, fieldsets: HTMLElement[], annotation: any}|null} */
    this.setViews = null;
    /** @type {number|undefined} */ this.queueCount = undefined;
    /** The scale whose score the next digit gives, after s, c or w. @type {string|null} */
    this.pendingScale = null;
    /** @type {HTMLFormElement|null} */ this.queueForm = null;
    /** @type {HTMLElement|null} */ this.queueTable = null;
    this.queueOffset = 0;
    /** @type {Map<string, string>} */ this.seenVariants = new Map();
    /** @type {Set<number>} */ this.seenAnnotators = new Set();
    const panel = /** @type {HTMLDetailsElement|null} */ (root.querySelector(".review-queue-panel"));
    if (panel) panel.open = window.matchMedia("(min-width: 1200px)").matches;
    document.addEventListener("keydown", (event) => this.onKey(event));
  }

  /** @param {KeyboardEvent} event */
  onKey(event) {
    if (document.querySelector("dialog[open]")) return;
    const target = /** @type {HTMLElement} */ (event.target);
    if (["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) && target.getAttribute("type") !== "radio") {
      if (event.key === "Escape") target.blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "?") {
      event.preventDefault();
      shortcutsOpen("review-shortcuts", SHORTCUTS, gettext("The scores can be chosen with the mouse as well; nothing is sent before Enter or Submit."));
      return;
    }
    const a = this.current;
    if (event.key === "n") { this.next(); return; }
    if (!a) return;
    if (event.key === "," || event.key === ".") {
      const ids = a.same_item || [];
      const at = ids.indexOf(a.id);
      const to = ids[at + (event.key === "." ? 1 : -1)];
      if (to !== undefined) this.open(to);
      return;
    }
    const form = /** @type {HTMLFormElement|null} */ (this.body.querySelector("form.review-form"));
    if (!form) return;
    if (this.pendingScale && /^[1-9]$/.test(event.key)) {
      event.preventDefault();
      this.score(form, this.pendingScale, Number(event.key));
      this.pendingScale = null;
      return;
    }
    this.pendingScale = null;
    if (SCALE_KEYS[event.key]) {
      this.pendingScale = SCALE_KEYS[event.key];
      this.say(interpolate(gettext("%(scale)s: press a digit for the score."), { scale: PROPERTY_NAMES[this.pendingScale] }, true), "");
    } else if (event.key === "[" || event.key === "]") {
      const count = a.sets.length;
      if (!count) return;
      const shown = Number(this.root.dataset.set || "1") - 1;
      this.showSet((shown + (event.key === "]" ? 1 : -1) + count) % count);
    } else if (event.key === "a" || event.key === "b") {
      const top = event.key === "a";
      for (const set of a.sets) {
        this.check(form, `sufficiency-${set.id}`, top ? 3 : 1);
        this.check(form, `compactness-${set.id}`, top ? 4 : 1);
      }
      this.check(form, "comprehensiveness", top ? 3 : 1);
      this.markScored();
      this.say(top ? gettext("Every score at its top: Enter submits.") : gettext("Every score at its lowest: Enter submits."), "");
    } else if (event.key === "m") {
      event.preventDefault();
      /** @type {HTMLElement|null} */ (form.querySelector("textarea[name=comment]"))?.focus();
    } else if (event.key === "Enter" && !["BUTTON", "A", "SUMMARY"].includes(target.tagName)) {
      event.preventDefault();
      form.requestSubmit();
    }
  }

  /** The score of one scale: the set shown's, or the whole annotation's.
   * @param {HTMLFormElement} form @param {string} scale @param {number} value */
  score(form, scale, value) {
    const a = this.current;
    const shown = a.sets[Number(this.root.dataset.set || "1") - 1];
    const name = scale === "comprehensiveness" ? scale : shown && `${scale}-${shown.id}`;
    if (!name || !this.check(form, name, value)) {
      this.say(interpolate(gettext("%(scale)s has no score %(value)s."), { scale: PROPERTY_NAMES[scale], value }, true), "error");
      return;
    }
    this.markScored();
    this.say(interpolate(gettext("%(scale)s: %(value)s."), { scale: PROPERTY_NAMES[scale], value }, true), "");
  }

  /** Checks the radio of that name and value; answers whether there was one.
   * @param {HTMLFormElement} form @param {string} name @param {number} value */
  check(form, name, value) {
    const radio = /** @type {HTMLInputElement|null} */ (form.querySelector(`input[type=radio][name="${name}"][value="${value}"]`));
    if (radio) radio.checked = true;
    return Boolean(radio);
  }

  /** @param {string} text @param {string} kind */
  say(text, kind) {
    this.message.textContent = text;
    this.message.className = `message ${kind}`;
  }

  /** The reviewer's queue beside the item: filters and a sort the server applies, a page
   * at a time; pick any annotation, not only the one "next" serves. */
  async loadQueue() {
    const box = /** @type {HTMLElement} */ (this.root.querySelector(".review-queue"));
    if (!box) return;
    if (!this.queueForm) {
      this.queueForm = this.queueFilters();
      this.queueTable = el("div", undefined, "queue-rows");
      box.replaceChildren(this.queueForm, this.queueTable);
    }
    const params = new URLSearchParams();
    for (const [name, value] of new FormData(this.queueForm).entries()) {
      if (value !== "") params.set(name, String(value));
    }
    params.set("limit", String(QUEUE_PAGE));
    params.set("offset", String(this.queueOffset));
    const response = await api(`/api/projects/${this.projectId}/reviews/queue/?${params}`, "GET");
    if (!response.ok) { this.say(errorText(response.data), "error"); return; }
    this.queueCount = response.data.count;
    const results = /** @type {any[]} */ (response.data.results);
    for (const entry of results) {
      this.seenVariants.set(String(entry.variant_id), entry.variant);
      this.seenAnnotators.add(entry.annotator);
    }
    this.fillChoices();
    const table = el("table", undefined, "grid");
    table.appendChild(el("caption", interpolate(gettext("Waiting for your review (%(count)s)"), response.data, true)));
    const head = el("tr");
    [gettext("Item"), gettext("Round"), gettext("Variant"), gettext("Waiting since"), ""]
      .forEach((h) => { const th = el("th", h); th.setAttribute("scope", "col"); head.appendChild(th); });
    table.appendChild(head);
    for (const entry of results) {
      const row = el("tr");
      row.dataset.annotation = String(entry.id);
      if (this.current && this.current.id === entry.id) row.setAttribute("aria-current", "true");
      [entry.item, String(entry.round), entry.variant, formatDateTime(entry.submitted_at)]
        .forEach((text) => row.appendChild(el("td", text)));
      const open = /** @type {HTMLButtonElement} */ (el("button", gettext("Review")));
      open.type = "button";
      open.setAttribute("aria-label", interpolate(gettext("Review annotation %(id)s (item %(item)s)"), entry, true));
      open.addEventListener("click", () => this.open(entry.id));
      const cell = el("td");
      cell.appendChild(open);
      row.appendChild(cell);
      table.appendChild(row);
    }
    const pager = el("div", undefined, "queue-pager");
    const earlier = el("button", gettext("Previous page"));
    earlier.type = "button";
    earlier.disabled = this.queueOffset === 0;
    earlier.addEventListener("click", () => { this.queueOffset = Math.max(0, this.queueOffset - QUEUE_PAGE); this.loadQueue(); });
    const later = el("button", gettext("Next page"));
    later.type = "button";
    later.disabled = this.queueOffset + results.length >= response.data.count;
    later.addEventListener("click", () => { this.queueOffset += QUEUE_PAGE; this.loadQueue(); });
    pager.append(earlier, later);
    /** @type {HTMLElement} */ (this.queueTable).replaceChildren(table, pager);
  }

  /** The queue's filters and sort; any change asks the server for the first page again. */
  queueFilters() {
    const form = /** @type {HTMLFormElement} */ (el("form", undefined, "queue-filters"));
    /** @param {string} name @param {string} label @param {Array<[string, string]>} options */
    const select = (name, label, options) => {
      const wrap = el("label", label + " ");
      const box = /** @type {HTMLSelectElement} */ (el("select"));
      box.name = name;
      for (const [value, text] of options) {
        const option = el("option", text);
        option.value = value;
        box.appendChild(option);
      }
      wrap.appendChild(box);
      form.appendChild(wrap);
      return box;
    };
    const any = /** @type {[string, string]} */ (["", gettext("any")]);
    select("variant", gettext("Variant"), [any]);
    select("annotator", gettext("Annotator"), [any]);
    select("round", gettext("Round"), [any, ...[1, 2, 3, 4, 5].map((n) => /** @type {[string, string]} */ ([String(n), String(n)]))]);
    select("flag", gettext("Flags"), [any, ["any", gettext("any flag")], ["none", gettext("no flag")],
      ...Object.keys(FLAG_NAMES).map((kind) => /** @type {[string, string]} */ ([kind, flagName(kind)]))]);
    select("waited_hours", gettext("Waiting"), [any, ["1", gettext("an hour or more")], ["24", gettext("a day or more")], ["72", gettext("three days or more")]]);
    select("sort", gettext("Sort"), [["queue", gettext("as served")], ["oldest", gettext("oldest first")], ["newest", gettext("newest first")],
      ["round", gettext("latest round first")], ["most_reviews", gettext("most reviews first")]]);
    form.addEventListener("change", () => { this.queueOffset = 0; this.loadQueue(); });
    form.addEventListener("submit", (event) => event.preventDefault());
    return form;
  }

  markCurrentRow() {
    for (const row of this.root.querySelectorAll(".review-queue tr[data-annotation]")) {
      const tr = /** @type {HTMLElement} */ (row);
      if (this.current && tr.dataset.annotation === String(this.current.id)) tr.setAttribute("aria-current", "true");
      else tr.removeAttribute("aria-current");
    }
  }

  /** The variant and annotator choices seen so far (the queue is blind: annotators by number). */
  fillChoices() {
    const form = /** @type {HTMLFormElement} */ (this.queueForm);
    const variants = /** @type {HTMLSelectElement} */ (form.elements.namedItem("variant"));
    for (const [id, name] of this.seenVariants) {
      if (![...variants.options].some((o) => o.value === id)) {
        const option = el("option", name);
        option.value = id;
        variants.appendChild(option);
      }
    }
    const annotators = /** @type {HTMLSelectElement} */ (form.elements.namedItem("annotator"));
    for (const id of [...this.seenAnnotators].sort((x, y) => x - y)) {
      if (![...annotators.options].some((o) => o.value === String(id))) {
        const option = el("option", interpolate(gettext("annotator #%(id)s"), { id }, true));
        option.value = String(id);
        annotators.appendChild(option);
      }
    }
  }

  /** @param {number} id */
  async open(id) {
    this.root.dataset.ready = "false";
    const response = await api(`/api/annotations/${id}/review/`, "GET");
    if (!response.ok) { this.say(errorText(response.data), "error"); return; }
    this.render({ ...response.data, queue: this.queueCount ?? "?" });
    this.markCurrentRow();
    window.scrollTo(0, 0);
  }

  async next() {
    this.root.dataset.ready = "false";
    this.loadQueue();
    const response = await api(`/api/projects/${this.projectId}/reviews/next/`, "POST");
    if (!response.ok) {
      this.say(errorText(response.data), "error");
      return;
    }
    if (!response.data.id) {
      this.current = null;
      this.body.replaceChildren(el("p", response.data.detail, "done"));
      this.root.dataset.ready = "true";
      this.root.dataset.done = "true";
      return;
    }
    this.render(response.data);
    this.markCurrentRow();
  }

  /** @param {any} a */
  render(a) {
    this.current = a;
    this.setViews = null;
    this.root.dataset.done = "false";
    const body = this.body;
    body.replaceChildren();
    body.appendChild(el("p", interpolate(gettext("Annotation %(id)s · round %(round)s of %(max_rounds)s · reviews %(reviews_done)s of %(reviews_needed)s · %(queue)s waiting for you"), a, true), "review-facts"));
    const same = a.same_item || [];
    if (same.length > 1) {
      const at = same.indexOf(a.id);
      const compare = el("div", undefined, "same-item");
      compare.appendChild(el("span", interpolate(gettext("Annotation %(n)s of %(count)s of this item"), { n: at + 1, count: same.length }, true)));
      for (const [text, step] of /** @type {Array<[string, number]>} */ ([[gettext("Previous (,)"), -1], [gettext("Next (.)"), 1]])) {
        const button = el("button", text);
        button.type = "button";
        const to = same[at + step];
        button.disabled = to === undefined;
        if (to !== undefined) button.addEventListener("click", () => this.open(to));
        compare.appendChild(button);
      }
      body.appendChild(compare);
    }
    const keys = el("p", undefined, "review-keys muted");
    keys.append(el("kbd", "?"), document.createTextNode(gettext(" for every keyboard shortcut.")));
    body.appendChild(keys);
    const instructions = el("details", undefined, "instructions");
    instructions.appendChild(el("summary", interpolate(gettext("Instructions the annotator saw (%(name)s, version %(version)s)"), a.variant, true)));
    instructions.appendChild(el("p", a.variant.text, "instruction-text"));
    body.appendChild(instructions);
    body.appendChild(goldFacts(a));

    const scoring = !a.verdict && !a.reviewed_by_you;
    const form = /** @type {HTMLFormElement} */ (el("form", undefined, "review-form"));
    form.noValidate = true; // checked here, so a set not on screen is named, not skipped silently
    if (!a.sets.length) form.appendChild(el("p", gettext("This annotation has no highlighted tokens: it cannot be sufficient."), "error"));
    /** @type {HTMLElement[]} */ const fieldsets = a.sets.map((/** @type {any} */ set, /** @type {number} */ n) => {
      const box = el("fieldset", undefined, `set-scores set-${n % COLOURS}`);
      box.dataset.set = String(set.id);
      const count = Object.values(set.tokens).flat().length;
      box.appendChild(el("legend", interpolate(ngettext("Set %(set)s (%(count)s token)", "Set %(set)s (%(count)s tokens)", count), { set: n + 1, count }, true)));
      box.appendChild(radioGroup(`sufficiency-${set.id}`, gettext("Sufficiency: could these tokens alone support the answer?"), SCALES.sufficiency));
      box.appendChild(radioGroup(`compactness-${set.id}`, gettext("Compactness"), SCALES.compactness));
      const comment = /** @type {HTMLInputElement} */ (el("input"));
      comment.name = `comment-${set.id}`;
      comment.placeholder = gettext("comment on this set (optional)");
      comment.setAttribute("aria-label", interpolate(gettext("Comment on set %(set)s (optional)"), { set: n + 1 }, true));
      box.appendChild(comment);
      box.addEventListener("change", () => this.markScored());
      return box;
    });
    const perSet = this.renderSetViews(a, fieldsets, scoring);
    if (scoring) form.appendChild(perSet); else body.appendChild(perSet);

    const whole = el("section", undefined, "whole-annotation");
    whole.appendChild(el("h2", gettext("The whole annotation"), "section-title"));
    whole.appendChild(el("p", gettext("Every set together: is all the evidence for the label covered?"), "muted"));
    whole.appendChild(renderDocuments(a.project, a.item.documents, a.sets, { diff: a.diff }));
    if (a.diff) whole.appendChild(el("p", gettext("Underlined: added since the previous round. Struck through: removed since then."), "muted"));
    if (scoring) {
      whole.appendChild(radioGroup("comprehensiveness", gettext("Comprehensiveness: does the annotation cover all the evidence?"), SCALES.comprehensiveness));
      const overall = /** @type {HTMLTextAreaElement} */ (el("textarea"));
      overall.name = "comment";
      overall.rows = 2;
      overall.placeholder = gettext("comment for the annotator (optional)");
      overall.setAttribute("aria-label", gettext("Comment for the annotator (optional)"));
      whole.appendChild(overall);
      const submit = /** @type {HTMLButtonElement} */ (el("button", gettext("Submit scores"), "primary"));
      submit.type = "submit";
      whole.appendChild(submit);
      form.appendChild(whole);
      form.addEventListener("submit", (event) => { event.preventDefault(); this.submit(form); });
    } else {
      body.appendChild(whole);
    }
    if (a.verdict) body.appendChild(el("p", interpolate(gettext("Decided: %(outcome)s."), { outcome: outcomeName(a.verdict.outcome) }, true), "muted"));
    else if (a.reviewed_by_you) body.appendChild(el("p", gettext("You have scored this annotation already."), "muted"));
    else body.appendChild(form);
    this.markScored();

    if (a.history.length) {
      const history = el("section", undefined, "history");
      history.appendChild(el("h2", gettext("Earlier rounds")));
      for (const earlier of a.history.slice().reverse()) {
        const round = el("details", undefined, "round");
        const verdict = earlier.verdict ? interpolate(gettext("%(outcome)s; failed: %(failed)s"), {
          outcome: outcomeName(earlier.verdict.outcome), failed: propertyList(earlier.verdict.failed) || gettext("none"),
        }, true) : "";
        round.appendChild(el("summary", interpolate(gettext("Round %(round)s: %(verdict)s"), { round: earlier.round, verdict }, true)));
        round.appendChild(renderDocuments(a.project, a.item.documents, earlier.sets));
        round.appendChild(reviewsTable(earlier.reviews));
        history.appendChild(round);
      }
      body.appendChild(history);
    }
    this.root.dataset.ready = "true";
    this.root.dataset.annotation = String(a.id);
  }

  /** One set at a time: tabs, then the documents with only that set highlighted beside
   * that set's scores. @param {any} a @param {HTMLElement[]} fieldsets @param {boolean} scoring */
  renderSetViews(a, fieldsets, scoring) {
    const section = el("section", undefined, "set-views");
    if (!a.sets.length) return section;
    section.appendChild(el("h2", gettext("Each set alone"), "section-title"));
    const tabs = el("div", undefined, "set-tabs");
    tabs.setAttribute("role", "tablist");
    tabs.setAttribute("aria-label", gettext("Rationale sets"));
    const panel = el("div", undefined, "set-view");
    panel.setAttribute("role", "tabpanel");
    panel.id = "set-view";
    a.sets.forEach((/** @type {any} */ set, /** @type {number} */ n) => {
      const count = Object.values(set.tokens).flat().length;
      const tab = el("button", interpolate(ngettext("Set %(set)s · %(count)s token", "Set %(set)s · %(count)s tokens", count), { set: n + 1, count }, true), `set-tab legend-set set-${n % COLOURS}`);
      tab.type = "button";
      tab.id = `set-tab-${n}`;
      tab.dataset.setNumber = String(n + 1);
      tab.dataset.index = String(n);
      tab.setAttribute("role", "tab");
      tab.setAttribute("aria-controls", "set-view");
      tab.addEventListener("click", () => this.showSet(n));
      tab.addEventListener("keydown", (event) => {
        const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
        if (!step) return;
        event.preventDefault();
        const next = (n + step + a.sets.length) % a.sets.length;
        this.showSet(next);
        /** @type {HTMLElement|null} */ (tabs.querySelector(`#set-tab-${next}`))?.focus();
      });
      tabs.appendChild(tab);
    });
    section.appendChild(tabs);
    const documents = el("div", undefined, "set-documents");
    const scores = el("div", undefined, "set-score-column");
    if (scoring) scores.append(...fieldsets);
    else scores.appendChild(el("p", gettext("Scoring is closed for this annotation."), "muted"));
    panel.append(documents, scores);
    section.appendChild(panel);
    this.setViews = { tabs, documents, fieldsets, annotation: a };
    this.showSet(0);
    return section;
  }

  /** @param {number} n */
  showSet(n) {
    const views = this.setViews;
    if (!views) return;
    const a = views.annotation;
    views.documents.replaceChildren(renderDocuments(a.project, a.item.documents, a.sets, { focus: n }));
    views.tabs.querySelectorAll("[role=tab]").forEach((tab, k) => {
      tab.setAttribute("aria-selected", String(k === n));
      tab.setAttribute("tabindex", k === n ? "0" : "-1");
      tab.classList.toggle("current", k === n);
    });
    views.fieldsets.forEach((fieldset, k) => { fieldset.hidden = k !== n; });
    views.documents.parentElement?.setAttribute("aria-labelledby", `set-tab-${n}`);
    this.root.dataset.set = String(n + 1);
  }

  /** A tick on each set's tab once both its scores are chosen. */
  markScored() {
    const views = this.setViews;
    if (!views) return;
    views.fieldsets.forEach((fieldset, k) => {
      const done = fieldset.querySelectorAll("input[type=radio]:checked").length === 2;
      views.tabs.querySelector(`#set-tab-${k}`)?.classList.toggle("scored", done);
    });
  }

  /** The first score missing, named, with its set brought on screen. @param {FormData} data */
  missingScore(data) {
    const a = this.current;
    for (const [n, set] of a.sets.entries()) {
      for (const [property, name] of [["sufficiency", gettext("sufficiency")], ["compactness", gettext("compactness")]]) {
        if (!data.get(`${property}-${set.id}`)) {
          this.showSet(n);
          return interpolate(gettext("Set %(set)s has no %(property)s score yet."), { set: n + 1, property: name }, true);
        }
      }
    }
    if (!data.get("comprehensiveness")) return gettext("Choose a comprehensiveness score for the whole annotation.");
    return null;
  }

  /** @param {HTMLFormElement} form */
  async submit(form) {
    const data = new FormData(form);
    const a = this.current;
    const missing = this.missingScore(data);
    if (missing) { this.say(missing, "error"); return; }
    const body = {
      comprehensiveness: Number(data.get("comprehensiveness")),
      comment: String(data.get("comment") || ""),
      set_scores: a.sets.map((/** @type {any} */ set) => ({
        rationale_set: set.id,
        sufficiency: Number(data.get(`sufficiency-${set.id}`)),
        compactness: Number(data.get(`compactness-${set.id}`)),
        comment: String(data.get(`comment-${set.id}`) || ""),
      })),
    };
    const response = await api(`/api/annotations/${a.id}/reviews/`, "POST", body);
    if (!response.ok) {
      this.say(errorText(response.data), "error");
      if (response.status === 409) await this.next();
      return;
    }
    const verdict = response.data.verdict;
    this.say(!verdict ? gettext("Scores saved. Other reviewers still have to score this annotation.")
      : verdict.failed.length
        ? interpolate(gettext("Scores saved. The reviews are complete: %(outcome)s (below the bar: %(failed)s)."), {
          outcome: outcomeName(verdict.outcome), failed: propertyList(verdict.failed),
        }, true)
        : interpolate(gettext("Scores saved. The reviews are complete: %(outcome)s."), { outcome: outcomeName(verdict.outcome) }, true), "ok");
    await this.next();
  }
}

const root = document.getElementById("review");
if (root) {
  const queue = new ReviewQueue(root);
  /** @type {any} */ (window).rationaleReview = queue;
  const wanted = new URLSearchParams(window.location.search).get("annotation");
  if (wanted && /^\d+$/.test(wanted)) { queue.loadQueue(); queue.open(Number(wanted)); } else queue.next();
}
