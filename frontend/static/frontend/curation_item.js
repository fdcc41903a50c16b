// @ts-check
// Curating one item: its annotations side by side under each word (token-aligned), each
// word's share of annotators, and the gold rationale sets the curator builds from them (take
// a set, union or intersection of chosen sets, words at least k annotators marked, or word by
// word), with the gold label or answer; saved with the version it started from, so that two
// curators never overwrite each other silently. Every server string is inserted as text.

import { intersectionOf, markedByAtLeast, setSize, toEntries, unionOf } from "./curation_sets.js";
import { bindShortcutsDialog, openDialog, typingIn } from "./curation_dialog.js";
import { formatDateTime, formatNumber } from "./format.js";
import { api, el, errorText } from "./http.js";
import { RationaleSets } from "./rationale_sets.js";
import { TokenSelection, stepFrom } from "./token_selection.js";
import { UndoHistory } from "./undo_history.js";
import { FLAG_NAMES } from "./flag_names.js";
import { codeUnitsOf } from "./text_offsets.js";

/** @typedef {import("./curation_sets.js").TokenSet} TokenSet */
/** @typedef {{entries: Array<Array<[string, number[]]>>, current: number}} GoldSnapshot */

const COLOURS = 6;
const SHARE_STEPS = 8;

const root = /** @type {HTMLElement} */ (document.getElementById("curation-item"));
const projectId = root.dataset.projectId;
const itemId = Number(root.dataset.itemId);
const api_url = `/api/projects/${projectId}/curation/items/${itemId}/`;
const message = /** @type {HTMLElement} */ (root.querySelector(".message"));
const matrix = /** @type {HTMLElement} */ (root.querySelector(".matrix"));
const kInput = /** @type {HTMLInputElement} */ (root.querySelector(".k-input"));

/** @type {any} */ let state = null;
let version = 0;
let dirty = false;
/** @type {RationaleSets} */ let gold = new RationaleSets();
/** @type {UndoHistory<GoldSnapshot>} */ const history = new UndoHistory();
const selection = new TokenSelection();
/** Chosen annotation sets, as "annotation index:set index". @type {Set<string>} */
const chosen = new Set();
/** @type {string[]} */ let docids = [];
/** @type {HTMLSelectElement|null} */ let labelField = null;
/** @type {HTMLInputElement|null} */ let answerField = null;

/** @param {string} text @param {string} [kind] */
function say(text, kind = "muted") {
  message.replaceChildren(text);
  message.className = `message ${kind}`;
}

/** @param {number} k annotation index */
const annotatorTag = (k) => `A${k + 1}`;

// ------------------------------------------------------------------ gold edits

/** @returns {GoldSnapshot} */
function snapshot() {
  return { entries: gold.toEntries(), current: gold.current };
}

/** Every change of the gold goes through here: undoable, marked unsaved, repainted.
 * @param {() => void} change */
function edit(change) {
  history.record(snapshot());
  change();
  dirty = true;
  paintGold();
}

function undo() {
  const previous = history.undo(snapshot());
  if (!previous) return;
  gold = RationaleSets.fromEntries(previous.entries, previous.current);
  dirty = true;
  paintGold();
}

/** Puts `set` into the current gold set when it is empty, else into a new one; an empty
 * result changes nothing and says so. @param {TokenSet} set @param {string} what */
function putSet(set, what) {
  if (!setSize(set)) {
    say(interpolate(gettext("%(what)s holds no word: nothing changed."), { what }, true), "error");
    return;
  }
  edit(() => {
    if (gold.tokenCount(gold.current) > 0) gold.startNew();
    for (const [docid, tokens] of toEntries(set, docids)) {
      for (const t of tokens) gold.applyRun(docid, t, t, "add");
    }
  });
  say(interpolate(gettext("%(what)s: %(count)s words in gold set %(set)s."), { what, count: setSize(set), set: gold.current + 1 }, true), "ok");
}

/** The chosen annotation sets, in annotation and set order. @returns {TokenSet[]} */
function chosenSets() {
  /** @type {TokenSet[]} */ const sets = [];
  state.annotations.forEach((/** @type {any} */ a, /** @type {number} */ k) => {
    a.sets.forEach((/** @type {any} */ s, /** @type {number} */ n) => {
      if (chosen.has(`${k}:${n}`)) sets.push(s.tokens);
    });
  });
  return sets;
}

function needChosen() {
  if (chosen.size) return false;
  say(gettext("Choose one or more annotation sets first (their boxes on the right, or Shift and the annotation's number)."), "error");
  return true;
}

function takeChosen() {
  if (needChosen()) return;
  const sets = chosenSets().filter((set) => setSize(set));
  edit(() => {
    for (const set of sets) {
      if (gold.tokenCount(gold.current) > 0) gold.startNew();
      for (const [docid, tokens] of toEntries(set, docids)) {
        for (const t of tokens) gold.applyRun(docid, t, t, "add");
      }
    }
  });
  say(interpolate(ngettext("Took %(count)s set as a gold set.", "Took %(count)s sets as gold sets.", sets.length), { count: sets.length }, true), "ok");
}

function unionChosen() {
  if (!needChosen()) putSet(unionOf(chosenSets()), gettext("The union of the chosen sets"));
}

function intersectionChosen() {
  if (!needChosen()) putSet(intersectionOf(chosenSets()), gettext("The intersection of the chosen sets"));
}

function atLeastK() {
  const k = Math.max(1, Math.floor(Number(kInput.value) || 1));
  const annotations = state.annotations.map((/** @type {any} */ a) => a.sets.map((/** @type {any} */ s) => s.tokens));
  putSet(markedByAtLeast(annotations, k), interpolate(gettext("Words marked by at least %(k)s annotators"), { k }, true));
}

/** @param {number} step */
function changeK(step) {
  const most = Math.max(1, state.annotations.length);
  kInput.value = String(Math.max(1, Math.min(most, (Number(kInput.value) || 1) + step)));
}

function deleteSet() {
  edit(() => {
    const entries = gold.toEntries();
    entries.splice(gold.current, 1);
    gold = RationaleSets.fromEntries(entries, Math.max(0, gold.current - 1));
  });
}

/** @param {number} k annotation index */
function toggleAnnotation(k) {
  const annotation = state.annotations[k];
  if (!annotation) return;
  const keys = annotation.sets.map((/** @type {any} */ _, /** @type {number} */ n) => `${k}:${n}`);
  const all = keys.every((/** @type {string} */ key) => chosen.has(key));
  for (const key of keys) {
    if (all) chosen.delete(key);
    else chosen.add(key);
  }
  paintChosen();
}

/** @param {boolean} on */
function chooseAll(on) {
  chosen.clear();
  if (on) {
    state.annotations.forEach((/** @type {any} */ a, /** @type {number} */ k) => {
      a.sets.forEach((/** @type {any} */ _, /** @type {number} */ n) => chosen.add(`${k}:${n}`));
    });
  }
  paintChosen();
}

// ------------------------------------------------------------------ painting

/** @param {number} share */
const shareStep = (share) => Math.round(share * SHARE_STEPS);

/** The documents' words in columns, each with the gold on top, a row per annotation and the
 * share of annotators below: the rows of one word line up whatever the line breaks. */
function renderMatrix() {
  matrix.replaceChildren();
  const annotations = state.annotations;
  state.item.documents.forEach((/** @type {any} */ doc, /** @type {number} */ d) => {
    const box = el("section", undefined, "cm-doc");
    box.appendChild(el("h3", doc.role === "question" ? gettext("Question") : state.item.documents.length > 1
      ? interpolate(gettext("Text %(n)s"), { n: d + 1 }, true) : gettext("Text"), "cm-doc-title"));
    const line = el("div", undefined, "cm-line");
    if (state.language) line.lang = state.language;
    const labels = el("div", undefined, "cm-col cm-labels");
    labels.setAttribute("aria-hidden", "true");
    labels.appendChild(el("span", gettext("gold"), "cm-label cm-label-gold"));
    annotations.forEach((/** @type {any} */ _, /** @type {number} */ k) => labels.appendChild(el("span", annotatorTag(k), "cm-label")));
    labels.appendChild(el("span", "%", "cm-label cm-label-share"));
    line.appendChild(labels);
    /** Per annotation, per token: the sets holding it. */
    const holders = annotations.map((/** @type {any} */ a) => {
      /** @type {Map<number, number[]>} */ const found = new Map();
      a.sets.forEach((/** @type {any} */ s, /** @type {number} */ n) => {
        for (const t of s.tokens[doc.docid] || []) found.set(t, [...(found.get(t) || []), n]);
      });
      return found;
    });
    let previous = 0;
    // The server's offsets count code points; the text is sliced in UTF-16 units.
    const at = codeUnitsOf(doc.text);
    doc.tokens.forEach((/** @type {number[]} */ [from, to], /** @type {number} */ i) => {
      const start = at(from), end = at(to);
      if (/\n\s*\n/.test(doc.text.slice(previous, start))) line.appendChild(el("div", undefined, "cm-break"));
      previous = end;
      const column = el("div", undefined, "cm-col");
      const token = el("span", doc.text.slice(start, end), "tok cm-tok");
      token.dataset.doc = String(d);
      token.dataset.i = String(i);
      column.appendChild(token);
      holders.forEach((/** @type {Map<number, number[]>} */ found, /** @type {number} */ k) => {
        const sets = found.get(i);
        const cell = el("span", undefined, "cm-cell");
        if (sets) {
          cell.classList.add("on", `set-${sets[0] % COLOURS}`);
          if (sets.length > 1) cell.classList.add("multi");
          cell.title = interpolate(gettext("%(who)s: set %(sets)s"), {
            who: `${annotatorTag(k)} ${annotations[k].annotator.username}`,
            sets: sets.map((n) => n + 1).join(", "),
          }, true);
        }
        column.appendChild(cell);
      });
      const share = state.shares[doc.first_token + i] ?? 0;
      const bar = el("span", undefined, `cm-share share-${shareStep(share)}`);
      const marked = Math.round(share * annotations.length);
      bar.title = interpolate(gettext("%(marked)s of %(total)s annotators"), { marked, total: annotations.length }, true);
      column.appendChild(bar);
      line.appendChild(column);
    });
    box.appendChild(line);
    matrix.appendChild(box);
  });
  matrix.addEventListener("mousedown", onPress);
  matrix.addEventListener("mouseover", onDragOver);
  document.addEventListener("mouseup", () => selection.release());
}

/** The row names (gold, A1, A2, ..., %) at the start of every line the words wrap into, so
 * that each line reads on its own: measured after layout, again when the width changes. */
function labelLines() {
  matrix.querySelectorAll(".cm-labels.repeat").forEach((node) => node.remove());
  matrix.querySelectorAll(".cm-line").forEach((line) => {
    const first = line.querySelector(".cm-labels");
    if (!first) return;
    let top = /** @type {HTMLElement} */ (first).offsetTop;
    for (const node of [...line.children]) {
      const column = /** @type {HTMLElement} */ (node);
      if (!column.classList.contains("cm-col") || column === first) continue;
      if (column.offsetTop > top) {
        const labels = /** @type {HTMLElement} */ (first.cloneNode(true));
        labels.classList.add("repeat");
        line.insertBefore(labels, column);
        top = column.offsetTop;
      }
    }
  });
}

function paintGold() {
  const docs = state.item.documents;
  matrix.querySelectorAll(".cm-tok").forEach((node) => {
    const token = /** @type {HTMLElement} */ (node);
    const docid = docs[Number(token.dataset.doc)].docid;
    const i = Number(token.dataset.i);
    const { first, count, runStart } = gold.marksOf(docid, i);
    token.className = "tok cm-tok";
    if (first >= 0) {
      token.classList.add("sel", `set-${first % COLOURS}`);
      token.dataset.setNumber = String(first + 1);
      if (runStart) token.classList.add("run-start");
      if (count > 1) token.classList.add("multi");
    }
    if (selection.isCursor(Number(token.dataset.doc), i)) token.classList.add("cursor");
  });
  const legend = /** @type {HTMLElement} */ (root.querySelector(".gold-sets"));
  legend.replaceChildren();
  gold.sets.forEach((_, n) => {
    const chip = el("button", interpolate(ngettext("Set %(set)s · %(count)s word", "Set %(set)s · %(count)s words", gold.tokenCount(n)),
      { set: n + 1, count: gold.tokenCount(n) }, true), `legend-set set-${n % COLOURS}${n === gold.current ? " current" : ""}`);
    chip.type = "button";
    chip.dataset.setNumber = String(n + 1);
    chip.setAttribute("aria-pressed", String(n === gold.current));
    chip.addEventListener("click", () => { gold.choose(n); paintGold(); });
    legend.appendChild(chip);
  });
  root.dataset.dirty = String(dirty);
  root.dataset.goldSets = JSON.stringify(gold.spans());
}

function paintChosen() {
  root.querySelectorAll("input[data-set-key]").forEach((node) => {
    const box = /** @type {HTMLInputElement} */ (node);
    box.checked = chosen.has(String(box.dataset.setKey));
  });
}

function renderAnnotations() {
  const list = /** @type {HTMLElement} */ (root.querySelector(".annotation-list"));
  list.replaceChildren();
  if (!state.annotations.length) {
    list.appendChild(el("p", gettext("No submitted annotation yet: build the gold word by word."), "muted"));
  }
  state.annotations.forEach((/** @type {any} */ a, /** @type {number} */ k) => {
    const box = el("div", undefined, "annotation-entry");
    const head = el("div", undefined, "annotation-head");
    head.appendChild(el("strong", annotatorTag(k), "annotation-tag"));
    head.appendChild(el("span", a.annotator.username, "annotation-who"));
    const facts = [a.variant.name, interpolate(gettext("round %(round)s"), a, true),
      interpolate(gettext("%(seconds)s s"), { seconds: formatNumber(a.time_spent_ms / 1000, 0) }, true)];
    if (a.label !== null && a.label !== "") facts.push(interpolate(gettext("label %(label)s"), a, true));
    head.appendChild(el("span", facts.join(" · "), "muted"));
    box.appendChild(head);
    if (a.flags.length) {
      box.appendChild(el("div", a.flags.map((/** @type {string} */ f) => FLAG_NAMES[f] || f).join(", "), "annotation-flags"));
    }
    const sets = el("div", undefined, "annotation-sets");
    if (!a.sets.length) sets.appendChild(el("span", gettext("no highlight"), "muted"));
    a.sets.forEach((/** @type {any} */ s, /** @type {number} */ n) => {
      const label = el("label", undefined, `set-chip set-${n % COLOURS}`);
      const box = /** @type {HTMLInputElement} */ (el("input"));
      box.type = "checkbox";
      box.dataset.setKey = `${k}:${n}`;
      box.addEventListener("change", () => {
        if (box.checked) chosen.add(`${k}:${n}`);
        else chosen.delete(`${k}:${n}`);
      });
      label.append(box, ` ${interpolate(ngettext("set %(set)s · %(count)s word", "set %(set)s · %(count)s words", setSize(s.tokens)),
        { set: n + 1, count: setSize(s.tokens) }, true)}`);
      sets.appendChild(label);
    });
    box.appendChild(sets);
    list.appendChild(box);
  });
  paintChosen();
}

function renderFacts() {
  const facts = /** @type {HTMLElement} */ (root.querySelector(".item-facts"));
  facts.replaceChildren();
  /** @param {string} name @param {string} value */
  const fact = (name, value) => {
    const box = el("div", undefined, "fact");
    box.append(el("span", name, "fact-name"), el("span", value, "fact-value"));
    facts.appendChild(box);
  };
  const item = state.item;
  if (item.query) fact(gettext("Question"), item.query);
  fact(gettext("Item's gold label"), item.label ?? "–");
  fact(gettext("Annotations"), formatNumber(state.annotations.length, 0));
  const agreement = state.agreement;
  fact(gettext("Mean pairwise kappa"), agreement.kappa === null ? "–" : formatNumber(agreement.kappa, 2, true));
  fact(gettext("Mean pairwise F1"), agreement.f1 === null ? "–" : formatNumber(agreement.f1, 2, true));
}

function renderAnswer() {
  const box = /** @type {HTMLElement} */ (root.querySelector(".gold-answer"));
  box.replaceChildren();
  const curated = state.curated;
  if (root.dataset.taskType === "reading_comprehension") {
    const field = el("label", gettext("Gold answer"));
    answerField = /** @type {HTMLInputElement} */ (el("input"));
    answerField.type = "text";
    answerField.name = "answer";
    const given = curated ? curated.answer : state.item.answer;
    answerField.value = given && typeof given === "object" && "text" in given ? String(given.text) : "";
    answerField.addEventListener("input", () => { dirty = true; root.dataset.dirty = "true"; });
    field.appendChild(answerField);
    box.appendChild(field);
    return;
  }
  const field = el("label", gettext("Gold label"));
  labelField = /** @type {HTMLSelectElement} */ (el("select"));
  labelField.name = "label";
  const keep = el("option", interpolate(gettext("the item's own (%(label)s)"), { label: state.item.label ?? "–" }, true));
  keep.value = "";
  labelField.appendChild(keep);
  const votes = new Map();
  for (const a of state.annotations) if (a.label) votes.set(a.label, (votes.get(a.label) || 0) + 1);
  for (const label of state.labels) {
    const votesFor = votes.get(label) || 0;
    const option = el("option", votesFor ? interpolate(ngettext("%(label)s (%(count)s annotator)", "%(label)s (%(count)s annotators)", votesFor),
      { label, count: votesFor }, true) : label);
    option.value = label;
    labelField.appendChild(option);
  }
  labelField.value = curated && curated.label ? curated.label : "";
  labelField.addEventListener("change", () => { dirty = true; root.dataset.dirty = "true"; });
  field.appendChild(labelField);
  box.appendChild(field);
}

function renderCuratedBy() {
  const line = /** @type {HTMLElement} */ (root.querySelector(".curated-by"));
  const curated = state.curated;
  if (!curated) {
    line.textContent = gettext("Not curated yet.");
    return;
  }
  const who = curated.curator ? curated.curator.username : "–";
  line.textContent = curated.by_hand
    ? interpolate(gettext("Version %(version)s, curated by hand by %(who)s on %(when)s."), { version: curated.version, who, when: formatDateTime(curated.curated_at) }, true)
    : interpolate(gettext("Version %(version)s, curated by rule %(rule)s (started by %(who)s) on %(when)s."), { version: curated.version, rule: curated.rule, who, when: formatDateTime(curated.curated_at) }, true);
  if (!curated.stale) return;
  // An annotation was submitted after the gold was made: curate again, or confirm it.
  const note = el("strong", gettext("stale: an annotation changed after curation"), "curated-stale");
  const confirm = el("button", gettext("Confirm the gold as it is"), "secondary");
  confirm.type = "button";
  confirm.dataset.action = "confirm";
  confirm.addEventListener("click", () => confirmGold());
  line.append(" ", note, " ", confirm);
}

async function confirmGold() {
  root.dataset.ready = "false";
  const response = await api(`${api_url}confirm/`, "POST", { version });
  root.dataset.ready = "true";
  if (!response.ok) {
    say(errorText(response.data), "error");
    return;
  }
  show(response.data);
  say(gettext("Confirmed: the curated gold stands as it is."), "ok");
}

/** @param {any} data */
function show(data) {
  state = data;
  version = data.curated ? data.curated.version : 0;
  docids = data.item.documents.map((/** @type {any} */ doc) => doc.docid);
  gold = data.curated && data.curated.sets.length
    ? RationaleSets.fromEntries(data.curated.sets.map((/** @type {any} */ s) => toEntries(s.tokens, docids)))
    : new RationaleSets();
  dirty = false;
  const most = Math.max(1, data.annotations.length);
  kInput.max = String(most);
  kInput.value = String(Math.min(most, Math.floor(data.annotations.length / 2) + 1));
  renderFacts();
  renderMatrix();
  labelLines();
  renderAnnotations();
  renderAnswer();
  renderCuratedBy();
  paintGold();
  root.dataset.version = String(version);
  root.dataset.ready = "true";
}

// ------------------------------------------------------------------ the mouse

/** @param {Event} event @returns {{doc: number, token: number}|null} */
function tokenAt(event) {
  const node = /** @type {HTMLElement} */ (event.target).closest(".cm-tok");
  if (!(node instanceof HTMLElement)) return null;
  return { doc: Number(node.dataset.doc), token: Number(node.dataset.i) };
}

/** @param {{doc: number, from: number, to: number}|null} run @param {"add"|"remove"} mode */
function applyRun(run, mode) {
  if (!run) return;
  gold.applyRun(docids[run.doc], run.from, run.to, mode);
}

/** @param {MouseEvent} event */
function onPress(event) {
  const at = tokenAt(event);
  if (!at || event.button !== 0) return;
  event.preventDefault();
  selection.moveCursor(at);
  if (event.shiftKey) {
    const run = selection.extendTo(at);
    if (run) {
      edit(() => applyRun(run, "add"));
      return;
    }
  }
  const mode = gold.has(docids[at.doc], at.token) ? "remove" : "add";
  history.record(snapshot());
  applyRun(selection.press(at, mode), mode);
  dirty = true;
  paintGold();
}

/** @param {MouseEvent} event */
function onDragOver(event) {
  if (!selection.drag) return;
  const at = tokenAt(event);
  if (!at) return;
  applyRun(selection.dragTo(at), selection.drag.mode);
  selection.moveCursor(at);
  paintGold();
}

// ------------------------------------------------------------------ saving and moving on

async function save() {
  const body = {
    version,
    sets: gold.spans(),
    label: labelField && labelField.value ? labelField.value : null,
    answer: answerField ? (answerField.value.trim() ? { text: answerField.value.trim() } : null) : (state.curated ? state.curated.answer : null),
  };
  root.dataset.ready = "false";
  const response = await api(api_url, "PUT", body);
  root.dataset.ready = "true";
  if (response.status === 409) {
    const reload = el("button", gettext("Load the saved version"), "secondary");
    reload.type = "button";
    reload.addEventListener("click", () => load());
    const text = el("span", interpolate(gettext("Not saved: another curator saved this item meanwhile (version %(version)s). Load the saved version to see it before you change it."),
      response.data, true));
    text.title = String(response.data.detail);
    message.replaceChildren(text, " ", reload);
    message.className = "message error";
    root.dataset.conflict = "true";
    return false;
  }
  if (!response.ok) {
    say(errorText(response.data), "error");
    return false;
  }
  show(response.data);
  say(interpolate(gettext("Saved: version %(version)s of the curated gold."), { version }, true), "ok");
  return true;
}

async function next() {
  const query = new URLSearchParams(window.location.search);
  query.set("state", "uncurated");
  query.set("page_size", "2");
  query.delete("page");
  const response = await api(`/api/projects/${projectId}/curation/queue/?${query}`, "GET");
  if (!response.ok) {
    say(errorText(response.data), "error");
    return;
  }
  const following = response.data.results.find((/** @type {any} */ entry) => entry.id !== itemId);
  if (!following) {
    const back = el("a", gettext("Back to the queue"));
    back.href = String(root.dataset.queueUrl);
    message.replaceChildren(gettext("No item is left to curate with this filter."), " ", back);
    message.className = "message ok";
    root.dataset.done = "true";
    return;
  }
  const address = String(root.dataset.itemUrl).replace(/\/0\/$/, `/${following.id}/`);
  window.location.href = `${address}${window.location.search}`;
}

async function skip() {
  if (dirty && !window.confirm(gettext("Leave this item without saving your changes?"))) return;
  dirty = false;
  await next();
}

async function saveAndNext() {
  if (await save()) await next();
}

async function load() {
  root.dataset.ready = "false";
  root.dataset.conflict = "false";
  const response = await api(api_url, "GET");
  if (!response.ok) {
    say(errorText(response.data), "error");
    return;
  }
  show(response.data);
  say("");
}

// ------------------------------------------------------------------ the keys

/** @param {KeyboardEvent} event */
function onKey(event) {
  if (!state || event.ctrlKey || event.metaKey || event.altKey || typingIn(event.target)) return;
  if (document.querySelector("dialog[open]")) return;
  const key = event.key;
  const lengths = state.item.documents.map((/** @type {any} */ doc) => doc.tokens.length);
  if (event.shiftKey && /^Digit[1-9]$/.test(event.code)) {
    toggleAnnotation(Number(event.code.slice(5)) - 1);
  } else if (key === "ArrowLeft" || key === "ArrowRight") {
    const to = stepFrom(selection.cursor, key === "ArrowLeft" ? -1 : 1, lengths);
    if (event.shiftKey) {
      history.record(snapshot());
      gold.applyRun(docids[to.doc], to.token, to.token, "add");
      dirty = true;
    }
    selection.moveCursor(to);
    paintGold();
  } else if (key === " ") {
    const { doc, token } = selection.cursor;
    edit(() => gold.toggle(docids[doc], token));
  } else if (/^[1-9]$/.test(key)) {
    if (gold.choose(Number(key) - 1)) paintGold();
  } else if (key === "n") { edit(() => gold.startNew()); }
  else if (key === "x") { edit(() => gold.clearCurrent()); }
  else if (key === "Delete") { deleteSet(); }
  else if (key === "z") { undo(); }
  else if (key === "a") { chooseAll(true); }
  else if (key === "c") { chooseAll(false); }
  else if (key === "t") { takeChosen(); }
  else if (key === "u") { unionChosen(); }
  else if (key === "i") { intersectionChosen(); }
  else if (key === "k") { atLeastK(); }
  else if (key === "+" || key === "=") { changeK(1); }
  else if (key === "-") { changeK(-1); }
  else if (key === "s") { save(); }
  else if (key === "Enter") { saveAndNext(); }
  else if (key === ".") { skip(); }
  else if (key === "?") { openDialog("curation-item-shortcuts"); }
  else return;
  event.preventDefault();
}

/** @type {Record<string, () => unknown>} */
const ACTIONS = {
  "new-set": () => edit(() => gold.startNew()),
  "clear-set": () => edit(() => gold.clearCurrent()),
  "delete-set": deleteSet,
  undo,
  take: takeChosen,
  union: unionChosen,
  intersection: intersectionChosen,
  "at-least": atLeastK,
  save,
  "save-next": saveAndNext,
  next: skip,
};
root.querySelectorAll("[data-action]").forEach((button) => {
  button.addEventListener("click", () => ACTIONS[String(/** @type {HTMLElement} */ (button).dataset.action)]());
});
document.addEventListener("keydown", onKey);
let resizing = 0;
window.addEventListener("resize", () => {
  window.clearTimeout(resizing);
  resizing = window.setTimeout(() => { if (state) labelLines(); }, 150);
});
window.addEventListener("beforeunload", (event) => {
  if (dirty) event.preventDefault();
});
// The back link keeps the queue's filter.
/** @type {HTMLAnchorElement} */ (root.querySelector(".back-to-queue")).search = window.location.search;
bindShortcutsDialog(root);
load();
