// @ts-check
// The curation queue: items to curate with their agreement (most disagreement first), the
// progress of curation, filters kept in the address, curating a whole filter by rule, and
// keyboard shortcuts for every step. Server strings are inserted as text only.

import { clearFormErrors, showFormErrors } from "./form_errors.js";
import { formatNumber } from "./format.js";
import { api, el, errorText } from "./http.js";
import { bindShortcutsDialog, openDialog, typingIn } from "./curation_dialog.js";
import { FLAG_NAMES } from "./flag_names.js";

const root = /** @type {HTMLElement} */ (document.getElementById("curation-queue"));
const projectId = root.dataset.projectId;
const base = `/api/projects/${projectId}/curation`;
const itemUrl = String(root.dataset.itemUrl);
const filters = /** @type {HTMLFormElement} */ (document.getElementById("queue-filters"));
const ruleForm = /** @type {HTMLFormElement} */ (document.getElementById("rule-form"));
const tbody = /** @type {HTMLElement} */ (root.querySelector(".queue-table tbody"));
const message = /** @type {HTMLElement} */ (root.querySelector(".message"));
const PAGE_SIZE = 25;
const SKIP_REASONS = /** @type {Record<string, string>} */ ({
  "already curated": gettext("already curated"),
  "annotators disagree": gettext("annotators disagree"),
  "fewer than two annotations": gettext("fewer than two annotations"),
  "agreement undefined": gettext("agreement undefined"),
  "merged set is empty": gettext("merged set is empty"),
});

let page = 1;
let count = 0;
let chosenRow = 0;

/** @param {string} text @param {string} [kind] */
function say(text, kind = "muted") {
  message.textContent = text;
  message.className = `message ${kind}`;
}

/** The queue's filter as a query string (without the page): what the address keeps, what
 * the item page's "next" follows and what "curate by rule" merges. */
function queueQuery() {
  const data = new FormData(filters);
  const query = new URLSearchParams();
  for (const name of ["order", "state", "variant", "flag"]) {
    const value = String(data.get(name) || "");
    if (value) query.set(name, value);
  }
  if (data.get("queued")) query.set("queued", "true");
  return query;
}

/** The form from the address, so that a reload or a shared link shows the same list. */
function filtersFromAddress() {
  const query = new URLSearchParams(window.location.search);
  for (const name of ["order", "state", "variant", "flag"]) {
    const field = /** @type {HTMLSelectElement} */ (filters.elements.namedItem(name));
    const value = query.get(name);
    if (value !== null && [...field.options].some((o) => o.value === value)) field.value = value;
  }
  /** @type {HTMLInputElement} */ (filters.elements.namedItem("queued")).checked = query.get("queued") === "true";
  page = Math.max(1, Number(query.get("page")) || 1);
}

/** @param {number|null} value */
const figure = (value) => (value === null || value === undefined ? "–" : formatNumber(value, 2, true));

/** @param {any} progress */
function showProgress(progress) {
  const list = /** @type {HTMLElement} */ (root.querySelector(".progress-figures"));
  list.replaceChildren();
  const rows = [
    [gettext("Items with annotations"), progress.items],
    [gettext("Curated by hand"), progress.curated_by_hand],
    [gettext("Curated by rule"), progress.curated_by_rule],
    [gettext("Left to curate"), progress.left],
  ];
  if (progress.stale) rows.push([gettext("Stale: an annotation changed after curation"), progress.stale]);
  if (progress.queued) rows.push([gettext("Sent from the data manager, left"), `${progress.queued_left} / ${progress.queued}`]);
  for (const [name, value] of rows) {
    list.append(el("dt", String(name)), el("dd", typeof value === "number" ? formatNumber(value, 0) : String(value)));
  }
  const total = Math.max(progress.items, 1);
  const hand = /** @type {HTMLElement} */ (root.querySelector(".progress-bar .by-hand"));
  const rule = /** @type {HTMLElement} */ (root.querySelector(".progress-bar .by-rule"));
  // Widths by class steps (the page's policy allows no style attributes).
  hand.className = `by-hand w-${Math.round((100 * progress.curated_by_hand) / total / 5) * 5}`;
  rule.className = `by-rule w-${Math.round((100 * progress.curated_by_rule) / total / 5) * 5}`;
}

/** @param {number} id */
function curateUrl(id) {
  const query = queueQuery();
  return `${itemUrl.replace(/\/0\/$/, `/${id}/`)}?${query}`;
}

/** @param {any[]} results */
function showRows(results) {
  tbody.replaceChildren();
  if (!results.length) {
    const row = el("tr");
    const cell = el("td", gettext("Nothing to curate with this filter."), "muted");
    cell.colSpan = 8;
    row.appendChild(cell);
    tbody.appendChild(row);
    return;
  }
  results.forEach((entry, n) => {
    const row = el("tr");
    row.dataset.item = String(entry.id);
    row.tabIndex = -1;
    const link = el("a", String(entry.annotation_id));
    link.href = curateUrl(entry.id);
    const first = el("td");
    first.appendChild(link);
    row.appendChild(first);
    row.appendChild(el("td", entry.split));
    row.appendChild(el("td", formatNumber(entry.annotations, 0), "num"));
    row.appendChild(el("td", entry.variants.join(", ")));
    row.appendChild(el("td", figure(entry.kappa), `num ${agreementClass(entry.kappa)}`));
    row.appendChild(el("td", figure(entry.f1), "num"));
    row.appendChild(el("td", entry.flags.map((/** @type {string} */ f) => FLAG_NAMES[f] || f).join(", ")));
    const curatedCell = el("td", entry.curated_rule === null ? "" : entry.curated_rule === "hand" ? gettext("by hand")
      : interpolate(gettext("by rule %(rule)s"), { rule: entry.curated_rule }, true));
    if (entry.curated_stale) {
      curatedCell.append(" ", el("strong", gettext("stale: an annotation changed after curation"), "curated-stale"));
    }
    row.appendChild(curatedCell);
    row.addEventListener("click", (event) => {
      if (/** @type {HTMLElement} */ (event.target).tagName !== "A") choose(n);
    });
    tbody.appendChild(row);
  });
  choose(Math.min(chosenRow, results.length - 1));
}

/** @param {number|null} kappa */
function agreementClass(kappa) {
  if (kappa === null || kappa === undefined) return "agree-none";
  if (kappa < 0.2) return "agree-low";
  if (kappa < 0.6) return "agree-mid";
  return "agree-high";
}

/** @param {number} n */
function choose(n) {
  const rows = [...tbody.querySelectorAll("tr[data-item]")];
  if (!rows.length) return;
  chosenRow = Math.max(0, Math.min(n, rows.length - 1));
  rows.forEach((row, i) => row.classList.toggle("chosen", i === chosenRow));
  const row = /** @type {HTMLElement} */ (rows[chosenRow]);
  row.setAttribute("aria-selected", "true");
  rows.forEach((other, i) => { if (i !== chosenRow) other.removeAttribute("aria-selected"); });
  if (document.activeElement && tbody.contains(document.activeElement)) row.focus();
}

async function load() {
  root.dataset.ready = "false";
  const query = queueQuery();
  window.history.replaceState(null, "", `?${query}${page > 1 ? `&page=${page}` : ""}`);
  query.set("page", String(page));
  query.set("page_size", String(PAGE_SIZE));
  const response = await api(`${base}/queue/?${query}`, "GET");
  if (!response.ok) {
    say(errorText(response.data), "error");
    root.dataset.ready = "true";
    return;
  }
  count = response.data.count;
  showProgress(response.data.progress);
  showRows(response.data.results);
  const pages = Math.max(1, Math.ceil(count / PAGE_SIZE));
  /** @type {HTMLElement} */ (root.querySelector(".queue-count")).textContent = interpolate(
    ngettext("%(count)s item · page %(page)s of %(pages)s", "%(count)s items · page %(page)s of %(pages)s", count),
    { count: formatNumber(count, 0), page, pages }, true);
  /** @type {HTMLButtonElement} */ (root.querySelector("[data-page=previous]")).disabled = page <= 1;
  /** @type {HTMLButtonElement} */ (root.querySelector("[data-page=next]")).disabled = page >= pages;
  root.dataset.ready = "true";
}

/** @param {number} step */
function turnPage(step) {
  const pages = Math.max(1, Math.ceil(count / PAGE_SIZE));
  const next = Math.max(1, Math.min(pages, page + step));
  if (next === page) return;
  page = next;
  chosenRow = 0;
  load();
}

filters.addEventListener("change", () => {
  page = 1;
  chosenRow = 0;
  load();
});
root.querySelectorAll("[data-page]").forEach((button) => button.addEventListener("click", () => {
  turnPage(/** @type {HTMLElement} */ (button).dataset.page === "next" ? 1 : -1);
}));

/** A unanimous rule keeps the annotators' sets as they are: no threshold, no merge. */
function ruleFields() {
  const unanimous = /** @type {HTMLSelectElement} */ (ruleForm.elements.namedItem("test")).value === "unanimous";
  for (const name of ["threshold", "merge"]) {
    /** @type {HTMLInputElement} */ (ruleForm.elements.namedItem(name)).disabled = unanimous;
  }
}
ruleForm.addEventListener("change", ruleFields);
ruleFields();

/** "Curate by rule": every item of the list's filter, all pages. */
ruleForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearFormErrors(ruleForm);
  const data = new FormData(ruleForm);
  const test = String(data.get("test"));
  const rule = test === "unanimous" ? { test }
    : { test, threshold: Number(data.get("threshold")), merge: String(data.get("merge")) };
  const result = /** @type {HTMLElement} */ (root.querySelector(".rule-result"));
  result.textContent = gettext("Curating…");
  result.className = "rule-result muted";
  const response = await api(`${base}/auto-merge/`, "POST", { rule, queue: queueQuery().toString() });
  if (!response.ok) {
    const data = response.data && response.data.rule ? response.data.rule : response.data;
    result.textContent = showFormErrors(ruleForm, data) || errorText(response.data);
    result.className = "rule-result error";
    return;
  }
  const report = response.data;
  const reasons = Object.entries(report.skipped_because)
    .map(([reason, n]) => `${SKIP_REASONS[reason] || reason} ${formatNumber(n, 0)}`).join(gettext(", "));
  result.textContent = interpolate(gettext("Rule %(rule)s: %(merged)s of %(matched)s items curated; %(skipped)s skipped (%(reasons)s)."),
    { rule: report.rule, merged: formatNumber(report.merged, 0), matched: formatNumber(report.matched, 0),
      skipped: formatNumber(report.skipped, 0), reasons: reasons || "–" }, true);
  result.className = "rule-result ok";
  load();
});

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || typingIn(event.target)) return;
  const rows = [...tbody.querySelectorAll("tr[data-item]")];
  const key = event.key;
  if (key === "?") openDialog("curation-shortcuts");
  else if (key === "j" || key === "ArrowDown") { if (rows.length) { choose(chosenRow + 1); /** @type {HTMLElement} */ (rows[chosenRow]).focus(); } }
  else if (key === "k" || key === "ArrowUp") { if (rows.length) { choose(chosenRow - 1); /** @type {HTMLElement} */ (rows[chosenRow]).focus(); } }
  else if (key === "Enter" || key === "o") {
    const row = /** @type {HTMLElement|undefined} */ (rows[chosenRow]);
    if (row) window.location.href = curateUrl(Number(row.dataset.item));
  } else if (key === "]") turnPage(1);
  else if (key === "[") turnPage(-1);
  else if (key === "/") /** @type {HTMLElement} */ (filters.querySelector("select"))?.focus();
  else if (key === "r") /** @type {HTMLElement} */ (ruleForm.querySelector("select"))?.focus();
  else return;
  event.preventDefault();
});

bindShortcutsDialog(root);
filtersFromAddress();
load();
