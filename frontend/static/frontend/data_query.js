// @ts-check
// The data manager's view as plain data, and its query string both ways: the filters, the
// search, the sort and the page. The URL is the view (a link or a reload reproduces it) and
// a saved view stores the same string without the page. Also the column layout a user
// keeps, and what a bulk action is sent for. No DOM, so that `node --test` checks it.

/** The filters the list API takes (qc/filters.py, ItemListFilter), by kind.
 * set: a comma-separated list of values; range: <name>_min and <name>_max; dates:
 * <name>_after and <name>_before; choice: one value. */
export const FILTERS = /** @type {const} */ ({
  status: "set",
  split: "set",
  label: "set",
  majority_label: "set",
  variant: "set",
  annotator: "set",
  flag: "set",
  perturbation: "choice",
  curation: "choice",
  perturbation_type: "set",
  kappa: "range",
  f1: "range",
  review_score: "range",
  submitted: "range",
  last_activity: "dates",
});

/** The columns the list sorts by. */
export const SORTABLE = ["id", "annotation_id", "split", "label", "status", "submitted", "kappa", "f1",
  "open_flags", "review_score", "last_activity"];

export const DEFAULT_PAGE_SIZE = 50;
export const PAGE_SIZES = [25, 50, 100, 200];

/** Parameters of the page itself that the list API does not take. */
export const PAGE_ONLY = ["view"];

/**
 * @typedef {{min: string, max: string}} Range
 * @typedef {{after: string, before: string}} Dates
 * @typedef {{
 *   search: string,
 *   sets: Record<string, string[]>,
 *   ranges: Record<string, Range>,
 *   dates: Record<string, Dates>,
 *   choices: Record<string, string>,
 *   ordering: string,
 *   page: number,
 *   pageSize: number,
 *   view: string,
 * }} ViewState
 */

/** @returns {ViewState} */
export function emptyState() {
  return { search: "", sets: {}, ranges: {}, dates: {}, choices: {}, ordering: "", page: 1, pageSize: DEFAULT_PAGE_SIZE, view: "" };
}

/** @param {string} value */
function splitList(value) {
  return value.split(",").map((v) => v.trim()).filter((v) => v !== "");
}

/** @param {string|null} value @param {number} fallback */
function positive(value, fallback) {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 ? n : fallback;
}

/** The view a query string describes. Parameters it does not know are kept out, and the
 * page's own (`view`) set apart. @param {string} query @returns {ViewState} */
export function stateFromQuery(query) {
  const params = new URLSearchParams(query.startsWith("?") ? query.slice(1) : query);
  const state = emptyState();
  state.search = params.get("search") || "";
  state.ordering = params.get("ordering") || "";
  state.page = positive(params.get("page"), 1);
  state.pageSize = positive(params.get("page_size"), DEFAULT_PAGE_SIZE);
  state.view = params.get("view") || "";
  for (const [name, kind] of Object.entries(FILTERS)) {
    if (kind === "set" && params.has(name)) {
      const values = splitList(params.get(name) || "");
      if (values.length) state.sets[name] = values;
    } else if (kind === "choice" && params.get(name)) {
      state.choices[name] = /** @type {string} */ (params.get(name));
    } else if (kind === "range") {
      const min = params.get(`${name}_min`) || "";
      const max = params.get(`${name}_max`) || "";
      if (min || max) state.ranges[name] = { min, max };
    } else if (kind === "dates") {
      const after = params.get(`${name}_after`) || "";
      const before = params.get(`${name}_before`) || "";
      if (after || before) state.dates[name] = { after, before };
    }
  }
  return state;
}

/**
 * The query string of a view, parameters in a fixed order so that the same view is always
 * the same string. `page` leaves out the page and its size (a saved view's query);
 * `viewParam` keeps the page's own parameter (the address bar).
 * @param {ViewState} state @param {{page?: boolean, viewParam?: boolean}} [options]
 */
export function queryFromState(state, options = {}) {
  const { page = true, viewParam = false } = options;
  const params = new URLSearchParams();
  if (state.search.trim()) params.set("search", state.search.trim());
  for (const [name, kind] of Object.entries(FILTERS)) {
    if (kind === "set" && state.sets[name]?.length) params.set(name, state.sets[name].join(","));
    if (kind === "choice" && state.choices[name]) params.set(name, state.choices[name]);
    if (kind === "range" && state.ranges[name]) {
      const { min, max } = state.ranges[name];
      if (min !== "") params.set(`${name}_min`, min);
      if (max !== "") params.set(`${name}_max`, max);
    }
    if (kind === "dates" && state.dates[name]) {
      const { after, before } = state.dates[name];
      if (after) params.set(`${name}_after`, after);
      if (before) params.set(`${name}_before`, before);
    }
  }
  if (state.ordering) params.set("ordering", state.ordering);
  if (page) {
    if (state.page > 1) params.set("page", String(state.page));
    if (state.pageSize !== DEFAULT_PAGE_SIZE) params.set("page_size", String(state.pageSize));
  }
  if (viewParam && state.view) params.set("view", state.view);
  return params.toString();
}

/** Whether two views filter, search and sort alike (the page and the tab aside).
 * @param {ViewState} a @param {ViewState} b */
export function sameFilter(a, b) {
  return queryFromState(a, { page: false }) === queryFromState(b, { page: false });
}

/** How many filters are set (the search counts as one). @param {ViewState} state */
export function filterCount(state) {
  return (state.search.trim() ? 1 : 0) + Object.keys(state.sets).length + Object.keys(state.ranges).length
    + Object.keys(state.dates).length + Object.keys(state.choices).length;
}

/** The filter named `name` removed; back to the first page. @param {ViewState} state @param {string} name
 * @returns {ViewState} */
export function withoutFilter(state, name) {
  const next = structuredClone(state);
  if (name === "search") next.search = "";
  delete next.sets[name];
  delete next.ranges[name];
  delete next.dates[name];
  delete next.choices[name];
  next.page = 1;
  return next;
}

/** A header click: ascending, then descending, then unsorted; another column starts over.
 * @param {string} ordering @param {string} field */
export function nextOrdering(ordering, field) {
  if (ordering === field) return `-${field}`;
  if (ordering === `-${field}`) return "";
  return field;
}

/** "ascending", "descending" or "none", as aria-sort says it. @param {string} ordering @param {string} field */
export function sortDirection(ordering, field) {
  if (ordering === field) return "ascending";
  if (ordering === `-${field}`) return "descending";
  return "none";
}

/**
 * The columns in the user's order and which are shown: a kept layout, with columns added
 * since it was kept appended at the end, and columns gone dropped.
 * @param {{order?: string[], hidden?: string[]}|null} kept @param {string[]} all @param {string[]} hiddenByDefault
 * @returns {{order: string[], hidden: string[]}}
 */
export function columnLayout(kept, all, hiddenByDefault) {
  if (!kept || !Array.isArray(kept.order)) return { order: [...all], hidden: hiddenByDefault.filter((c) => all.includes(c)) };
  const order = [...kept.order.filter((c) => all.includes(c)), ...all.filter((c) => !kept.order?.includes(c))];
  const known = new Set(kept.order);
  const hidden = [...(kept.hidden || []).filter((c) => all.includes(c)), ...hiddenByDefault.filter((c) => all.includes(c) && !known.has(c))];
  return { order, hidden: [...new Set(hidden)] };
}

/** The column moved `step` places (-1 left, +1 right), staying within the row.
 * @param {string[]} order @param {string} column @param {number} step */
export function moveColumn(order, column, step) {
  const from = order.indexOf(column);
  const to = from + step;
  if (from < 0 || to < 0 || to >= order.length) return [...order];
  const next = [...order];
  next.splice(from, 1);
  next.splice(to, 0, column);
  return next;
}

/**
 * What a bulk action is sent for: the rows chosen by hand, or everything the filter
 * matches (not only the rows shown).
 * @param {{allMatching: boolean, ids: Iterable<number>}} selection @param {ViewState} state
 * @returns {{ids: number[]}|{filter: string}}
 */
export function bulkTarget(selection, state) {
  if (selection.allMatching) return { filter: queryFromState(state, { page: false }) };
  return { ids: [...selection.ids].sort((a, b) => a - b) };
}

/** The range a filter box gives, or why it cannot be sent (min above max).
 * @param {string} min @param {string} max @returns {string|null} */
export function rangeProblem(min, max) {
  if (min !== "" && !Number.isFinite(Number(min))) return "min";
  if (max !== "" && !Number.isFinite(Number(max))) return "max";
  if (min !== "" && max !== "" && Number(min) > Number(max)) return "order";
  return null;
}
