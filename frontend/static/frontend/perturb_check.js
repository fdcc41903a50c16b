// @ts-check
// The check queue: pending drafts of other authors, each beside its original with the
// word diff; accept, edit then accept, or reject with a comment.

import { formatDateTime } from "./format.js";
import { api, el, errorText } from "./http.js";
import {
  allowedLabels,
  answerText,
  goldEditor,
  markInvalid,
  statusBadge,
  textEditor,
  typeBadges,
  typePicker,
} from "./perturb_parts.js";
import { countsText, diffCounts, diffFragment, diffWords } from "./word_diff.js";

const root = /** @type {HTMLElement} */ (document.getElementById("perturb-check"));
const base = `/api/projects/${root.dataset.projectId}/perturbations`;
const body = /** @type {HTMLElement} */ (document.getElementById("check-body"));
const actions = /** @type {HTMLElement} */ (document.getElementById("check-actions"));
const message = /** @type {HTMLElement} */ (root.querySelector(".message"));
const comment = /** @type {HTMLTextAreaElement} */ (actions.querySelector("textarea[name=comment]"));
const acceptButton = /** @type {HTMLButtonElement} */ (document.getElementById("accept-perturbation"));
const editButton = /** @type {HTMLButtonElement} */ (document.getElementById("edit-perturbation"));
const rejectButton = /** @type {HTMLButtonElement} */ (document.getElementById("reject-perturbation"));

/** @type {any} */ let settings;
/** @type {any} */ let current = null;
/** @type {any} */ let editing = null; // the editors while the checker edits
/** @type {any[]} */ let queue = [];

/** @param {string} text @param {string} kind */
function say(text, kind) {
  message.textContent = text;
  message.className = `message ${kind}`;
}

async function loadQueue() {
  const response = await api(`${base}/queue/?limit=200`, "GET");
  if (!response.ok) {
    say(errorText(response.data), "error");
    return [];
  }
  queue = response.data.results;
  /** @type {HTMLElement} */ (document.getElementById("queue-count")).textContent = String(response.data.count);
  const list = /** @type {HTMLElement} */ (document.getElementById("queue"));
  list.replaceChildren();
  if (!queue.length) list.appendChild(el("li", gettext("Nothing waiting for you."), "muted"));
  for (const entry of queue) {
    const item = el("li");
    item.dataset.perturbation = String(entry.id);
    if (current && current.id === entry.id) item.classList.add("current");
    const button = /** @type {HTMLButtonElement} */ (el("button"));
    button.type = "button";
    button.append(el("strong", `#${entry.id} · ${entry.original.annotation_id}`), " ");
    button.appendChild(typeBadges(entry.types, settings.types));
    button.appendChild(el("span", interpolate(gettext("by %(author)s, %(when)s"), { author: entry.author, when: formatDateTime(entry.created_at) }, true), "meta"));
    button.addEventListener("click", () => open(entry.id));
    item.appendChild(button);
    list.appendChild(item);
  }
  return queue;
}

/** @param {string} title @param {string} before @param {string} after */
function comparison(title, before, after) {
  const box = el("section", undefined, "card pt-compare");
  const ops = diffWords(before, after);
  const counts = diffCounts(ops);
  const head = el("div", undefined, "pt-text-head");
  head.append(el("h3", title), el("span", counts.changed ? countsText(counts) : gettext("no change"), `pt-count${counts.changed ? " changed" : ""}`));
  const columns = el("div", undefined, "pt-columns");
  const left = el("div");
  left.append(el("div", gettext("Original"), "col-title"), el("div", before, "pt-plain"));
  const right = el("div");
  const diff = el("div", undefined, "pt-diff");
  diff.appendChild(diffFragment(before, after, ops));
  right.append(el("div", gettext("Perturbed, changes marked"), "col-title"), diff);
  columns.append(left, right);
  box.append(head, columns);
  return box;
}

/** @param {any} p */
function goldTable(p) {
  const table = el("table", undefined, "grid compact");
  const head = el("tr");
  ["", gettext("Original"), gettext("Perturbed")].forEach((h) => head.appendChild(el("th", h)));
  table.appendChild(head);
  const rows = [[gettext("Label"), p.original.label ?? "–", p.label ?? "–"]];
  if (settings.task_type === "reading_comprehension") rows.push([gettext("Answer"), answerText(p.original.answer), answerText(p.answer)]);
  for (const [name, before, after] of rows) {
    const row = el("tr");
    row.append(el("th", name), el("td", before), el("td", after, before === after ? "" : "changed-cell"));
    table.appendChild(row);
  }
  return table;
}

function showView() {
  const p = current;
  editing = null;
  const meta = el("div", undefined, "pt-meta");
  meta.append(statusBadge(p.status), typeBadges(p.types, settings.types),
    el("span", interpolate(gettext("#%(id)s of %(original)s"), { id: p.id, original: p.original.annotation_id }, true)),
    el("span", interpolate(gettext("by %(author)s"), p, true)), el("span", formatDateTime(p.created_at)));
  /** @type {HTMLElement[]} */ const parts = [el("h2", interpolate(gettext("Perturbation #%(id)s"), p, true)), meta];
  p.original.documents.forEach((/** @type {any} */ doc, /** @type {number} */ n) => parts.push(comparison(doc.name, doc.text, p.texts[n])));
  if (p.original.query_mode === "free") parts.push(comparison(gettext("Query"), p.original.query, p.query));
  const gold = el("section", undefined, "card");
  gold.append(el("h3", gettext("Gold result")), goldTable(p));
  parts.push(gold);
  body.replaceChildren(...parts);
  editButton.textContent = gettext("Edit…");
  acceptButton.textContent = gettext("Accept");
  rejectButton.hidden = false;
}

function showEditor() {
  const p = current;
  /** @type {HTMLElement[]} */ const parts = [el("h2", interpolate(gettext("Edit perturbation #%(id)s"), p, true))];
  const typesCard = el("section", undefined, "card");
  const picker = typePicker(settings.types, p.types, () => {});
  typesCard.append(el("h3", gettext("Types")), picker.node);
  parts.push(typesCard);
  const textsCard = el("section", undefined, "card");
  const editors = p.original.documents.map((/** @type {any} */ doc, /** @type {number} */ n) =>
    textEditor({ name: doc.name, original: doc.text, value: p.texts[n], position: n, onChange: () => {} }));
  textsCard.append(el("h3", gettext("Texts")), ...editors.map((/** @type {any} */ e) => e.node));
  let query = null;
  if (p.original.query_mode === "free") {
    query = textEditor({ name: gettext("Query"), original: p.original.query, value: p.query, position: "query", onChange: () => {} });
    textsCard.appendChild(query.node);
  }
  parts.push(textsCard);
  const goldCard = el("section", undefined, "card");
  const gold = goldEditor({
    taskType: settings.task_type,
    labels: allowedLabels(settings, p.original),
    original: p.original,
    label: p.label,
    answer: p.answer,
    onChange: () => {},
  });
  goldCard.append(el("h3", gettext("Gold result")), gold.node);
  parts.push(goldCard);
  body.replaceChildren(...parts);
  editing = { picker, editors, query, gold };
  editButton.textContent = gettext("Cancel edit");
  acceptButton.textContent = gettext("Accept with edits");
  rejectButton.hidden = true;
}

/** Only what the checker changed: the service records those fields as the edit. */
function edits() {
  const p = current;
  /** @type {Record<string, any>} */ const changed = {};
  const types = editing.picker.value();
  if (types.join("\u0000") !== p.types.join("\u0000")) changed.types = types;
  const texts = editing.editors.map((/** @type {any} */ e) => e.value());
  if (texts.some((/** @type {string} */ t, /** @type {number} */ n) => t !== p.texts[n])) changed.texts = texts;
  if (editing.query && editing.query.value() !== p.query) changed.query = editing.query.value();
  const label = editing.gold.label();
  if (label !== p.label) changed.label = label;
  const answer = editing.gold.answer();
  if (answer && answerText(answer) !== answerText(p.answer)) changed.answer = answer;
  return changed;
}

/** @param {"accept"|"reject"} decision */
async function decide(decision) {
  if (!current) return;
  const text = comment.value.trim();
  if (decision === "reject" && !text) {
    say(gettext("Say why in the comment before rejecting."), "error");
    comment.classList.add("invalid");
    comment.focus();
    return;
  }
  /** @type {Record<string, any>} */ const payload = { decision, comment: text };
  if (decision === "accept" && editing) {
    const changed = edits();
    if (Object.keys(changed).length) payload.edits = changed;
  }
  [acceptButton, editButton, rejectButton].forEach((b) => { b.disabled = true; });
  const response = await api(`${base}/${current.id}/check/`, "POST", payload);
  [acceptButton, editButton, rejectButton].forEach((b) => { b.disabled = false; });
  if (!response.ok) {
    say(errorText(response.data), "error");
    markInvalid(body, response.data);
    if (response.status === 409 || response.status === 404) await next();
    return;
  }
  const done = response.data;
  root.dataset.lastDecided = String(done.id);
  say(done.status !== "accepted" ? interpolate(gettext("Rejected #%(id)s."), done, true)
    : done.edited_in_check ? interpolate(gettext("Accepted #%(id)s with your edits: item %(item)s joins the annotation queue."), done, true)
      : interpolate(gettext("Accepted #%(id)s: item %(item)s joins the annotation queue."), done, true), "ok");
  comment.value = "";
  await next();
}

async function next() {
  current = null;
  const waiting = await loadQueue();
  if (waiting.length) return open(waiting[0].id, false);
  body.replaceChildren(el("div", gettext("All caught up: no perturbation is waiting for your check."), "card pt-empty"));
  actions.hidden = true;
}

/** @param {number} id @param {boolean} [clear] */
async function open(id, clear = true) {
  const response = await api(`${base}/${id}/`, "GET");
  if (!response.ok) return say(errorText(response.data), "error");
  current = response.data;
  if (clear) say("", "");
  comment.classList.remove("invalid");
  root.dataset.current = String(id);
  root.querySelectorAll(".pt-queue li").forEach((li) => li.classList.toggle("current", /** @type {HTMLElement} */ (li).dataset.perturbation === String(id)));
  showView();
  actions.hidden = false;
}

acceptButton.addEventListener("click", () => decide("accept"));
rejectButton.addEventListener("click", () => decide("reject"));
editButton.addEventListener("click", () => (editing ? showView() : showEditor()));
comment.addEventListener("input", () => comment.classList.remove("invalid"));

api(`${base}/settings/`, "GET").then(async (response) => {
  if (!response.ok) return say(errorText(response.data), "error");
  settings = response.data;
  await next();
  root.dataset.ready = "true";
});
