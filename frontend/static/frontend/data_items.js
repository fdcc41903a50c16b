// @ts-check
// The data manager: a dense table of the project's items, paged, filtered, searched and
// sorted on the server; columns a user shows, hides and orders (kept in this browser);
// saved views as tabs; a selection of rows or of everything the filter matches, and bulk
// actions on it. The address bar holds the view (data_query.js), so a link or a reload
// reproduces it. Every server string is inserted as text.

import { confirmAction } from "./confirm_dialog.js";
import {
  bulkTarget,
  columnLayout,
  emptyState,
  filterCount,
  moveColumn,
  nextOrdering,
  PAGE_SIZES,
  queryFromState,
  rangeProblem,
  sameFilter,
  sortDirection,
  stateFromQuery,
  withoutFilter,
} from "./data_query.js";
import { formatDateTime, formatNumber, formatTimeAgo } from "./format.js";
import { api, el, errorText } from "./http.js";
import { flagName, ITEM_STATUSES } from "./item_terms.js";

/** @typedef {import("./data_query.js").ViewState} ViewState */
/** @typedef {{key: string, name: string}} Choice */
/**
 * @typedef {{kind: "set", param: string, options: () => Choice[]}
 *   | {kind: "range", param: string, integer?: boolean}
 *   | {kind: "dates", param: string}
 *   | {kind: "choice", param: string, options: () => Choice[]}
 *   | {kind: "perturbation", param: string}} FilterSpec
 * @typedef {{key: string, label: string, sort?: string, filter?: FilterSpec, hidden?: boolean,
 *   cls?: string, cell: (row: any) => Node|string}} Column
 */

const root = /** @type {HTMLElement} */ (document.getElementById("data-manager"));
const projectId = root.dataset.projectId || "";
const canAct = root.dataset.canAct === "true";
const knownActions = (root.dataset.bulkActions || "").split(" ");
const choices = JSON.parse(document.getElementById("data-manager-choices")?.textContent || "{}");
const LIST_URL = `/api/projects/${projectId}/items/`;
const VIEWS_URL = `/api/projects/${projectId}/item-views/`;
const PAGE_URL = `/projects/${projectId}/data/items/`;
const LAYOUT_KEY = `rw-data-manager-columns:${root.dataset.user}:${projectId}`;

const STATUSES = /** @type {Choice[]} */ (ITEM_STATUSES);
const SPLITS = /** @type {Choice[]} */ ([
  { key: "train", name: "train" }, { key: "val", name: "val" }, { key: "test", name: "test" },
]);
const FLAG_CHOICES = () => /** @type {Choice[]} */ ([
  { key: "any", name: gettext("any open flag") },
  { key: "none", name: gettext("no open flag") },
  ...(choices.flag_kinds || []).map((/** @type {Choice} */ k) => ({ key: k.key, name: flagName(k.key) })),
]);
// The curation filter (qc/filters.py, CURATION_STATES).
const CURATION_STATES = /** @type {Choice[]} */ ([
  { key: "none", name: gettext("not curated") },
  { key: "curated", name: gettext("curated") },
  { key: "stale", name: gettext("stale: an annotation changed after curation") },
]);
const PERTURBATION_ROLES = /** @type {Choice[]} */ ([
  { key: "original", name: gettext("originals with perturbed copies") },
  { key: "perturbed", name: gettext("perturbed copies") },
  { key: "none", name: gettext("neither") },
]);
const labelChoices = () => (choices.labels || []).map((/** @type {string} */ l) => ({ key: l, name: l }));
const variantChoices = () => (choices.variants || []).map((/** @type {any} */ v) => ({ key: String(v.id), name: v.name }));
const annotatorChoices = () => (choices.annotators || []).map((/** @type {any} */ a) => ({ key: String(a.id), name: a.username }));

/** A funnel drawn in SVG (a font may lack the glyph). */
function funnelIcon() {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("width", "12");
  svg.setAttribute("height", "12");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", "M1.5 2h13l-5 6.2V13l-3 1.5V8.2z");
  path.setAttribute("fill", "currentColor");
  svg.appendChild(path);
  return svg;
}

/** @param {Choice[]} list @param {string} key */
const nameOf = (list, key) => list.find((c) => c.key === key)?.name ?? key;

/** @param {number|null|undefined} value */
const score = (value) => (value === null || value === undefined ? "—" : formatNumber(value, 2, true));

/** @type {Column[]} */
const COLUMNS = [
  { key: "id", label: "#", sort: "id", cls: "num", cell: (row) => String(row.id) },
  {
    key: "annotation_id", label: gettext("Item"), sort: "annotation_id",
    cell: (row) => {
      const link = el("a", row.annotation_id, "item-link");
      link.href = `${PAGE_URL}${row.id}/`;
      return link;
    },
  },
  { key: "split", label: gettext("Split"), sort: "split", filter: { kind: "set", param: "split", options: () => SPLITS }, cell: (row) => row.split || "—" },
  { key: "label", label: gettext("Gold label"), sort: "label", filter: { kind: "set", param: "label", options: labelChoices }, cell: (row) => row.label ?? "—" },
  { key: "majority_label", label: gettext("Majority label"), filter: { kind: "set", param: "majority_label", options: labelChoices }, hidden: true, cell: (row) => row.majority_label ?? "—" },
  {
    key: "texts", label: gettext("Text"), cls: "text-cell",
    cell: (row) => {
      const box = el("span");
      for (const text of row.texts || []) {
        const part = el("span", text.preview, "preview");
        if ((row.texts || []).length > 1) part.prepend(el("span", `${text.name}: `, "preview-name"));
        box.appendChild(part);
      }
      return box;
    },
  },
  { key: "query", label: gettext("Question"), hidden: !["reading_comprehension", "multiple_choice"].includes(root.dataset.taskType || ""), cls: "text-cell", cell: (row) => row.query_preview ?? "" },
  {
    key: "status", label: gettext("Status"), sort: "status", filter: { kind: "set", param: "status", options: () => STATUSES },
    cell: (row) => {
      const box = el("span");
      if (row.status) box.appendChild(el("span", nameOf(STATUSES, row.status), `status-chip status-${row.status}`));
      if (row.curated) box.appendChild(el("span", gettext("curated"), "status-chip status-curated"));
      if (row.curated_stale) box.appendChild(el("span", gettext("stale"), "status-chip status-stale"));
      return box;
    },
  },
  {
    key: "curation", label: gettext("Curation"), filter: { kind: "choice", param: "curation", options: () => CURATION_STATES }, hidden: true,
    cell: (row) => (row.curated ? nameOf(CURATION_STATES, row.curated_stale ? "stale" : "curated") : ""),
  },
  {
    key: "variants", label: gettext("Done / quota per variant"), filter: { kind: "set", param: "variant", options: variantChoices },
    // One line however many variants: the totals and a bar of one segment per variant
    // (filled as far as its quota is); each variant's figures in the tooltip and, for screen
    // readers, in words.
    cell: (row) => {
      const variants = row.variants || [];
      const box = el("span", undefined, "variant-fills");
      const done = variants.reduce((/** @type {number} */ sum, /** @type {any} */ v) => sum + Math.min(v.submitted, v.quota), 0);
      const quota = variants.reduce((/** @type {number} */ sum, /** @type {any} */ v) => sum + v.quota, 0);
      const full = variants.filter((/** @type {any} */ v) => v.quota > 0 && v.submitted >= v.quota).length;
      const each = variants.map((/** @type {any} */ v) => `${v.name} ${v.submitted}/${v.quota}`).join("; ");
      box.title = each;
      box.appendChild(el("span", `${done} / ${quota}`, "fill-total"));
      const bar = el("span", undefined, "fill-bar");
      bar.setAttribute("aria-hidden", "true");
      for (const v of variants) {
        const segment = el("span", undefined, v.submitted >= v.quota ? "fill-segment full" : "fill-segment");
        segment.style.setProperty("--fill", String(v.quota ? Math.min(1, v.submitted / v.quota) : 0));
        bar.appendChild(segment);
      }
      box.append(bar, el("span", interpolate(ngettext("%(full)s of %(count)s variant full", "%(full)s of %(count)s variants full", variants.length), { full, count: variants.length }, true), "fill-note"));
      box.appendChild(el("span", each, "sr-only"));
      return box;
    },
  },
  { key: "submitted", label: gettext("Submitted"), sort: "submitted", cls: "num", filter: { kind: "range", param: "submitted", integer: true }, cell: (row) => String(row.submitted ?? "—") },
  {
    key: "annotators", label: gettext("Annotators"), filter: { kind: "set", param: "annotator", options: annotatorChoices }, hidden: true,
    cell: (row) => (row.annotators || []).map((/** @type {any} */ a) => a.username).join(", "),
  },
  { key: "kappa", label: gettext("Kappa"), sort: "kappa", cls: "num", filter: { kind: "range", param: "kappa" }, cell: (row) => score(row.kappa) },
  { key: "f1", label: gettext("Token F1"), sort: "f1", cls: "num", filter: { kind: "range", param: "f1" }, cell: (row) => score(row.f1) },
  {
    key: "open_flags", label: gettext("Open flags"), sort: "open_flags", filter: { kind: "set", param: "flag", options: FLAG_CHOICES },
    cell: (row) => {
      const box = el("span");
      if (!row.open_flags) return box;
      // One chip, and "+n" for the rest, so that a row stays one line high.
      const kinds = /** @type {string[]} */ (row.flag_kinds || []);
      box.title = kinds.map(flagName).join(", ");
      box.appendChild(el("span", kinds.length ? flagName(kinds[0]) : String(row.open_flags), "flag-chip"));
      if (kinds.length > 1) box.appendChild(el("span", `+${kinds.length - 1}`, "flag-chip flag-more"));
      return box;
    },
  },
  { key: "review_score", label: gettext("Review score"), sort: "review_score", cls: "num", filter: { kind: "range", param: "review_score" }, cell: (row) => score(row.review_score) },
  {
    key: "perturbation", label: gettext("Perturbation"), filter: { kind: "perturbation", param: "perturbation" }, hidden: true,
    cell: (row) => {
      const p = row.perturbation;
      if (!p || !p.role) return "";
      if (p.role === "perturbed") {
        const box = el("span", `${gettext("perturbed")} ← `);
        const link = el("a", `#${p.original_id}`);
        link.href = `${PAGE_URL}${p.original_id}/`;
        box.appendChild(link);
        if (p.types.length) box.appendChild(el("span", ` (${p.types.join(", ")})`, "muted"));
        return box;
      }
      return interpolate(ngettext("original, %(count)s copy", "original, %(count)s copies", p.perturbed_ids.length), { count: p.perturbed_ids.length }, true);
    },
  },
  {
    key: "last_activity", label: gettext("Last activity"), sort: "last_activity", filter: { kind: "dates", param: "last_activity" },
    cell: (row) => {
      if (!row.last_activity) return "—";
      const time = el("time", formatTimeAgo(row.last_activity));
      time.dateTime = row.last_activity;
      time.title = formatDateTime(row.last_activity);
      return time;
    },
  },
];
const BY_KEY = new Map(COLUMNS.map((c) => [c.key, c]));
/** Filters by their parameter, with the column that names them. */
const FILTER_COLUMNS = new Map(COLUMNS.filter((c) => c.filter).map((c) => [/** @type {FilterSpec} */ (c.filter).param, c]));

/** The filter's values in words, for its chip. @param {Column} column @param {ViewState} state */
function filterWords(column, state) {
  const spec = /** @type {FilterSpec} */ (column.filter);
  if (spec.kind === "set") return (state.sets[spec.param] || []).map((v) => nameOf(spec.options(), v)).join(", ");
  if (spec.kind === "range") {
    const { min, max } = state.ranges[spec.param] || { min: "", max: "" };
    /** A bound as the reader's locale writes it; one that is not a number, as typed. @param {string} bound */
    const shown = (bound) => (Number.isFinite(Number(bound)) ? formatNumber(Number(bound)) : bound);
    if (min && max) return `${shown(min)} – ${shown(max)}`;
    return min ? `≥ ${shown(min)}` : `≤ ${shown(max)}`;
  }
  if (spec.kind === "dates") {
    const { after, before } = state.dates[spec.param] || { after: "", before: "" };
    const parts = [];
    if (after) parts.push(interpolate(gettext("after %(when)s"), { when: formatDateTime(after) }, true));
    if (before) parts.push(interpolate(gettext("before %(when)s"), { when: formatDateTime(before) }, true));
    return parts.join(", ");
  }
  if (spec.kind === "choice") return nameOf(spec.options(), state.choices[spec.param] || "");
  const parts = [];
  if (state.choices.perturbation) parts.push(nameOf(PERTURBATION_ROLES, state.choices.perturbation));
  if (state.sets.perturbation_type) parts.push(state.sets.perturbation_type.map((t) => nameOf(choices.perturbation_types || [], t)).join(", "));
  return parts.join(" · ");
}

/** Whether the view sets this filter. @param {FilterSpec} spec @param {ViewState} state */
function filterSet(spec, state) {
  if (spec.kind === "set") return Boolean(state.sets[spec.param]);
  if (spec.kind === "range") return Boolean(state.ranges[spec.param]);
  if (spec.kind === "dates") return Boolean(state.dates[spec.param]);
  if (spec.kind === "choice") return Boolean(state.choices[spec.param]);
  return Boolean(state.choices.perturbation || state.sets.perturbation_type);
}

const BULK_ACTIONS = /** @type {Array<{key: string, label: string, verb: string, danger?: boolean}>} */ ([
  { key: "send_back", label: gettext("Send back for revision…"), verb: gettext("Send back") },
  { key: "mark_gold", label: gettext("Mark as gold"), verb: gettext("Mark as gold") },
  { key: "unmark_gold", label: gettext("Unmark gold"), verb: gettext("Unmark gold") },
  { key: "exclude", label: gettext("Exclude from exports"), verb: gettext("Exclude") },
  { key: "include", label: gettext("Include in exports"), verb: gettext("Include") },
  { key: "assign_variant", label: gettext("Assign to a variant…"), verb: gettext("Assign") },
  { key: "assign_annotators", label: gettext("Assign to annotators…"), verb: gettext("Assign") },
  { key: "curation_start", label: gettext("Start a curation pass"), verb: gettext("Start curation") },
  { key: "delete", label: gettext("Delete…"), verb: gettext("Delete"), danger: true },
]);

class DataManager {
  constructor() {
    /** @type {ViewState} */ this.state = stateFromQuery(window.location.search);
    /** @type {any[]} */ this.rows = [];
    this.count = 0;
    this.estimate = false;
    /** @type {Set<number>} */ this.selected = new Set();
    this.allMatching = false;
    /** @type {any[]} */ this.views = [];
    this.layout = columnLayout(this.keptLayout(), COLUMNS.map((c) => c.key), COLUMNS.filter((c) => c.hidden).map((c) => c.key));
    this.cursor = 0;
    this.loadSerial = 0;
    /** @type {HTMLElement|null} */ this.popover = null;
    this.table = /** @type {HTMLTableElement} */ (root.querySelector(".dm-table"));
    this.wrap = /** @type {HTMLElement} */ (root.querySelector(".dm-table-wrap"));
    this.countBox = /** @type {HTMLElement} */ (root.querySelector(".dm-count"));
    this.message = /** @type {HTMLElement} */ (root.querySelector(".message"));
    this.search = /** @type {HTMLInputElement} */ (root.querySelector("#dm-search-input"));
  }

  start() {
    this.search.value = this.state.search;
    /** @type {HTMLFormElement} */ (root.querySelector(".dm-search")).addEventListener("submit", (event) => {
      event.preventDefault();
      this.change({ ...this.state, search: this.search.value, page: 1 });
    });
    root.querySelector("#dm-refresh")?.addEventListener("click", () => this.load());
    root.querySelector("#dm-add-filter")?.addEventListener("click", (event) => this.openFilterMenu(/** @type {HTMLElement} */ (event.currentTarget)));
    root.querySelector("#dm-columns")?.addEventListener("click", (event) => this.openColumns(/** @type {HTMLElement} */ (event.currentTarget)));
    window.addEventListener("popstate", () => {
      this.state = stateFromQuery(window.location.search);
      this.search.value = this.state.search;
      this.clearSelection();
      this.load();
    });
    document.addEventListener("keydown", (event) => this.onKey(event));
    this.table.addEventListener("click", (event) => this.onTableClick(event));
    this.table.addEventListener("keydown", (event) => this.onRowKey(event));
    this.loadViews();
    this.load();
  }

  /** @param {string} text @param {string} kind */
  say(text, kind) {
    this.message.textContent = text;
    this.message.className = `message ${kind}`;
  }

  // ------------------------------------------------------------ the view in the address

  /** @param {ViewState} state */
  change(state) {
    if (!sameFilter(state, this.state)) this.clearSelection();
    this.say("", "");
    this.state = state;
    this.search.value = state.search;
    const query = queryFromState(state, { viewParam: true });
    window.history.pushState(null, "", `${PAGE_URL}${query ? `?${query}` : ""}`);
    this.load();
  }

  async load() {
    const serial = ++this.loadSerial;
    root.dataset.ready = "false";
    this.wrap.setAttribute("aria-busy", "true");
    this.wrap.classList.add("loading");
    this.countBox.textContent = gettext("Loading items…");
    const query = queryFromState(this.state);
    sessionStorage.setItem(`rw-data-manager-url-${projectId}`, `${PAGE_URL}${query || this.state.view ? `?${queryFromState(this.state, { viewParam: true })}` : ""}`);
    const exportLink = /** @type {HTMLAnchorElement|null} */ (root.querySelector("#dm-export"));
    if (exportLink) {
      const filter = queryFromState({ ...this.state, ordering: "" }, { page: false });
      exportLink.href = `/projects/${projectId}/results/${filter ? `?${new URLSearchParams({ item_filter: filter })}` : ""}`;
    }
    const response = await api(`${LIST_URL}${query ? `?${query}` : ""}`, "GET");
    if (serial !== this.loadSerial) return; // a later view was asked for meanwhile
    this.wrap.classList.remove("loading");
    this.wrap.setAttribute("aria-busy", "false");
    if (!response.ok) {
      this.rows = [];
      this.count = 0;
      this.renderError(response);
    } else {
      this.rows = response.data.results;
      this.count = response.data.count;
      this.estimate = Boolean(response.data.count_is_estimate);
      this.render();
    }
    root.dataset.ready = "true";
  }

  /** @param {import("./http.js").ApiResponse} response */
  renderError(response) {
    this.countBox.textContent = "";
    this.renderHead();
    const body = /** @type {HTMLElement} */ (this.table.tBodies[0]);
    const cell = el("td", undefined, "empty-state error-state");
    cell.colSpan = this.visibleColumns().length + 1;
    cell.appendChild(el("p", response.status === 400
      ? interpolate(gettext("The list cannot show this view: %(problem)s"), { problem: errorText(response.data) }, true)
      : errorText(response.data), "error"));
    const reset = el("button", gettext("Show all items"), "secondary");
    reset.type = "button";
    reset.addEventListener("click", () => this.change(emptyState()));
    cell.appendChild(reset);
    const row = el("tr");
    row.appendChild(cell);
    body.replaceChildren(row);
    /** @type {HTMLElement} */ (root.querySelector(".dm-pager")).replaceChildren();
    this.renderChips();
    this.renderTabs();
  }

  render() {
    this.countBox.textContent = this.estimate
      ? interpolate(gettext("about %(count)s items (estimated)"), { count: formatNumber(this.count) }, true)
      : interpolate(ngettext("%(count)s item", "%(count)s items", this.count), { count: formatNumber(this.count) }, true);
    this.renderTabs();
    this.renderChips();
    this.renderHead();
    this.renderBody();
    this.renderPager();
    this.renderSelection();
  }

  // ------------------------------------------------------------ saved views

  async loadViews() {
    const response = await api(VIEWS_URL, "GET");
    if (!response.ok) return;
    this.views = Array.isArray(response.data) ? response.data : response.data.results || [];
    this.renderTabs();
  }

  currentView() {
    return this.views.find((v) => String(v.id) === this.state.view) || null;
  }

  renderTabs() {
    const nav = /** @type {HTMLElement} */ (root.querySelector(".view-tabs"));
    nav.replaceChildren();
    const list = el("ul", undefined, "tab-list");
    const current = this.currentView();
    /** @param {string} label @param {string} view @param {string} query @param {any} [saved] */
    const tab = (label, view, query, saved) => {
      const item = el("li");
      const link = el("a", label, "view-tab");
      link.href = `${PAGE_URL}?${new URLSearchParams(query ? `${query}&view=${view}` : view ? `view=${view}` : "").toString()}`;
      if (!view) link.href = PAGE_URL;
      const active = view ? this.state.view === view : !this.state.view;
      if (active) link.setAttribute("aria-current", "page");
      if (saved) {
        link.dataset.view = String(saved.id);
        if (saved.shared) link.appendChild(el("span", ` · ${gettext("shared")}`, "tab-shared"));
      }
      link.addEventListener("click", (event) => {
        event.preventDefault();
        const state = stateFromQuery(query);
        state.view = view;
        this.change(state);
      });
      item.appendChild(link);
      list.appendChild(item);
    };
    tab(gettext("All items"), "", "");
    for (const view of this.views) tab(view.name, String(view.id), view.query, view);
    nav.appendChild(list);
    const tools = el("div", undefined, "tab-tools");
    if (current) {
      const modified = !sameFilter(stateFromQuery(current.query), this.state);
      if (modified) {
        tools.appendChild(el("span", gettext("changed"), "tab-modified"));
        this.toolButton(tools, "view-update", gettext("Save changes"), () => this.updateView(current, { query: queryFromState(this.state, { page: false }) }));
      }
      this.toolButton(tools, "view-rename", gettext("Rename"), () => this.renameView(current));
      this.toolButton(tools, "view-share", current.shared ? gettext("Make private") : gettext("Share with the project"),
        () => this.updateView(current, { shared: !current.shared }));
      this.toolButton(tools, "view-delete", gettext("Delete view"), () => this.deleteView(current));
    }
    this.toolButton(tools, "view-save", gettext("Save as a view…"), () => this.saveView());
    nav.appendChild(tools);
  }

  /** @param {HTMLElement} box @param {string} id @param {string} label @param {() => void} act */
  toolButton(box, id, label, act) {
    const button = el("button", label, "link-button");
    button.type = "button";
    button.id = id;
    button.addEventListener("click", act);
    box.appendChild(button);
  }

  /** A name (and whether shared) asked in a dialog. @param {string} title @param {string} name @param {boolean|null} shared */
  async askName(title, name, shared) {
    const body = el("div", undefined, "view-form");
    const nameLabel = el("label", gettext("Name"));
    const input = /** @type {HTMLInputElement} */ (el("input"));
    input.type = "text";
    input.name = "view-name";
    input.value = name;
    input.maxLength = 120;
    nameLabel.appendChild(input);
    body.appendChild(nameLabel);
    const share = /** @type {HTMLInputElement} */ (el("input"));
    if (shared !== null) {
      const shareLabel = el("label", undefined, "check");
      share.type = "checkbox";
      share.name = "view-shared";
      share.checked = shared;
      shareLabel.append(share, ` ${gettext("Shared with the project (every member who may open the data manager sees it)")}`);
      body.appendChild(shareLabel);
    }
    setTimeout(() => input.focus(), 0);
    const answer = await confirmAction({
      title, message: "", confirmLabel: gettext("Save"), body,
      check: () => (input.value.trim() ? null : gettext("Give the view a name.")),
    });
    return answer.confirmed ? { name: input.value.trim(), shared: share.checked } : null;
  }

  async saveView() {
    const asked = await this.askName(gettext("Save this view"), "", false);
    if (!asked) return;
    const response = await api(VIEWS_URL, "POST", { ...asked, query: queryFromState(this.state, { page: false }) });
    if (!response.ok) { this.say(errorText(response.data), "error"); return; }
    await this.loadViews();
    this.change({ ...this.state, view: String(response.data.id) });
    this.say(interpolate(gettext("View “%(name)s” saved."), response.data, true), "ok");
  }

  /** @param {any} view */
  async renameView(view) {
    const asked = await this.askName(gettext("Rename the view"), view.name, null);
    if (asked) await this.updateView(view, { name: asked.name });
  }

  /** @param {any} view @param {Record<string, any>} change */
  async updateView(view, change) {
    const response = await api(`${VIEWS_URL}${view.id}/`, "PATCH", change);
    if (!response.ok) { this.say(errorText(response.data), "error"); return; }
    this.say(interpolate(gettext("View “%(name)s” saved."), response.data, true), "ok");
    await this.loadViews();
  }

  /** @param {any} view */
  async deleteView(view) {
    const answer = await confirmAction({
      title: gettext("Delete the view"),
      message: interpolate(gettext("The view “%(name)s” goes for everyone who sees it. The items stay as they are."), view, true),
      confirmLabel: gettext("Delete view"), danger: true,
    });
    if (!answer.confirmed) return;
    const response = await api(`${VIEWS_URL}${view.id}/`, "DELETE");
    if (!response.ok) { this.say(errorText(response.data), "error"); return; }
    await this.loadViews();
    this.change({ ...this.state, view: "" });
    this.say(interpolate(gettext("View “%(name)s” deleted."), view, true), "ok");
  }

  // ------------------------------------------------------------ filters

  renderChips() {
    const box = /** @type {HTMLElement} */ (root.querySelector(".filter-chips"));
    box.replaceChildren();
    const state = this.state;
    /** @param {string} label @param {string} name @param {() => void} [edit] */
    const chip = (label, name, edit) => {
      const item = el("span", undefined, "filter-chip");
      item.dataset.filter = name;
      const text = el("button", label, "chip-edit");
      text.type = "button";
      if (edit) text.addEventListener("click", edit); else text.disabled = true;
      const remove = el("button", "×", "chip-remove");
      remove.type = "button";
      remove.setAttribute("aria-label", interpolate(gettext("Remove the filter %(filter)s"), { filter: label }, true));
      remove.addEventListener("click", () => this.change(withoutFilter(state, name)));
      item.append(text, remove);
      box.appendChild(item);
    };
    if (state.search.trim()) chip(interpolate(gettext("Search: “%(text)s”"), { text: state.search.trim() }, true), "search", () => this.search.focus());
    for (const [param, column] of FILTER_COLUMNS) {
      const spec = /** @type {FilterSpec} */ (column.filter);
      if (!filterSet(spec, state)) continue;
      chip(`${column.label}: ${filterWords(column, state)}`, param, () => this.openFilter(column, box));
    }
    if (filterCount(state) > 1) {
      const clear = el("button", gettext("Clear all filters"), "link-button");
      clear.type = "button";
      clear.addEventListener("click", () => this.change({ ...emptyState(), ordering: state.ordering, pageSize: state.pageSize, view: state.view }));
      box.appendChild(clear);
    }
    box.hidden = !box.childElementCount;
  }

  /** A menu of every filter, for the toolbar's button. @param {HTMLElement} anchor */
  openFilterMenu(anchor) {
    const menu = el("div", undefined, "filter-menu");
    menu.appendChild(el("p", gettext("Filter by"), "popover-title"));
    const list = el("ul");
    for (const column of FILTER_COLUMNS.values()) {
      const item = el("li");
      const button = el("button", column.label, "link-button");
      button.type = "button";
      button.dataset.filter = /** @type {FilterSpec} */ (column.filter).param;
      button.addEventListener("click", () => this.openFilter(column, anchor));
      item.appendChild(button);
      list.appendChild(item);
    }
    menu.appendChild(list);
    this.showPopover(menu, anchor);
  }

  /** The editor of one column's filter. @param {Column} column @param {HTMLElement} anchor */
  openFilter(column, anchor) {
    const spec = /** @type {FilterSpec} */ (column.filter);
    const form = /** @type {HTMLFormElement} */ (el("form", undefined, "filter-editor"));
    form.dataset.filter = spec.param;
    form.appendChild(el("p", column.label, "popover-title"));
    const problem = el("p", "", "error");
    problem.setAttribute("role", "alert");
    /** @type {() => ViewState|null} */ let read;
    const state = structuredClone(this.state);
    state.page = 1;
    if (spec.kind === "set") {
      read = this.setEditor(form, spec.options(), state.sets[spec.param] || [], (values) => {
        if (values.length) state.sets[spec.param] = values; else delete state.sets[spec.param];
        return state;
      });
    } else if (spec.kind === "range") {
      const now = state.ranges[spec.param] || { min: "", max: "" };
      const min = this.numberInput(form, gettext("At least"), now.min, `${spec.param}_min`, spec.integer);
      const max = this.numberInput(form, gettext("At most"), now.max, `${spec.param}_max`, spec.integer);
      read = () => {
        const wrong = rangeProblem(min.value.trim(), max.value.trim());
        if (wrong) {
          problem.textContent = wrong === "order" ? gettext("The lower bound is above the upper one.") : gettext("Write a number.");
          return null;
        }
        if (min.value.trim() || max.value.trim()) state.ranges[spec.param] = { min: min.value.trim(), max: max.value.trim() };
        else delete state.ranges[spec.param];
        return state;
      };
    } else if (spec.kind === "dates") {
      const now = state.dates[spec.param] || { after: "", before: "" };
      const after = this.dateInput(form, gettext("After"), now.after, `${spec.param}_after`);
      const before = this.dateInput(form, gettext("Before"), now.before, `${spec.param}_before`);
      read = () => {
        if (after.value && before.value && after.value > before.value) {
          problem.textContent = gettext("The start is after the end.");
          return null;
        }
        if (after.value || before.value) state.dates[spec.param] = { after: after.value, before: before.value };
        else delete state.dates[spec.param];
        return state;
      };
    } else if (spec.kind === "choice") {
      const list = el("fieldset", undefined, "choice-list");
      list.appendChild(el("legend", gettext("Items")));
      /** @type {HTMLInputElement[]} */ const radios = [];
      for (const choice of [{ key: "", name: gettext("all items") }, ...spec.options()]) {
        const label = el("label", undefined, "check");
        const radio = /** @type {HTMLInputElement} */ (el("input"));
        radio.type = "radio";
        radio.name = spec.param;
        radio.value = choice.key;
        radio.checked = (state.choices[spec.param] || "") === choice.key;
        radios.push(radio);
        label.append(radio, ` ${choice.name}`);
        list.appendChild(label);
      }
      form.appendChild(list);
      read = () => {
        const value = radios.find((r) => r.checked)?.value || "";
        if (value) state.choices[spec.param] = value; else delete state.choices[spec.param];
        return state;
      };
    } else {
      const roles = el("fieldset", undefined, "choice-list");
      roles.appendChild(el("legend", gettext("Items")));
      /** @type {HTMLInputElement[]} */ const radios = [];
      for (const choice of [{ key: "", name: gettext("all items") }, ...PERTURBATION_ROLES]) {
        const label = el("label", undefined, "check");
        const radio = /** @type {HTMLInputElement} */ (el("input"));
        radio.type = "radio";
        radio.name = "perturbation";
        radio.value = choice.key;
        radio.checked = (state.choices.perturbation || "") === choice.key;
        radios.push(radio);
        label.append(radio, ` ${choice.name}`);
        roles.appendChild(label);
      }
      form.appendChild(roles);
      const readTypes = this.setEditor(form, choices.perturbation_types || [], state.sets.perturbation_type || [], (values) => {
        if (values.length) state.sets.perturbation_type = values; else delete state.sets.perturbation_type;
        return state;
      });
      read = () => {
        const role = radios.find((r) => r.checked)?.value || "";
        if (role) state.choices.perturbation = role; else delete state.choices.perturbation;
        return readTypes();
      };
    }
    form.appendChild(problem);
    const buttons = el("div", undefined, "popover-buttons");
    const clear = el("button", gettext("Clear"), "secondary");
    clear.type = "button";
    clear.addEventListener("click", () => { this.closePopover(); this.change(withoutFilter(this.state, spec.param)); });
    const apply = el("button", gettext("Apply"), "primary");
    apply.type = "submit";
    buttons.append(clear, apply);
    form.appendChild(buttons);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const next = read();
      if (!next) return;
      this.closePopover();
      this.change(next);
    });
    this.showPopover(form, anchor);
  }

  /**
   * Checkboxes of the options, with a box to narrow a long list.
   * @param {HTMLElement} form @param {Choice[]} options @param {string[]} chosen
   * @param {(values: string[]) => ViewState} apply @returns {() => ViewState}
   */
  setEditor(form, options, chosen, apply) {
    const box = el("fieldset", undefined, "choice-list");
    box.appendChild(el("legend", gettext("Any of")));
    if (options.length > 8) {
      const narrow = /** @type {HTMLInputElement} */ (el("input"));
      narrow.type = "search";
      narrow.placeholder = gettext("Narrow the list…");
      narrow.setAttribute("aria-label", gettext("Narrow the list"));
      narrow.addEventListener("input", () => {
        const text = narrow.value.toLowerCase();
        box.querySelectorAll("label").forEach((label) => {
          /** @type {HTMLElement} */ (label).hidden = !label.textContent?.toLowerCase().includes(text);
        });
      });
      box.appendChild(narrow);
    }
    const scroll = el("div", undefined, "choice-scroll");
    /** @type {HTMLInputElement[]} */ const boxes = [];
    for (const option of options) {
      const label = el("label", undefined, "check");
      const input = /** @type {HTMLInputElement} */ (el("input"));
      input.type = "checkbox";
      input.value = option.key;
      input.checked = chosen.includes(option.key);
      boxes.push(input);
      label.append(input, ` ${option.name}`);
      scroll.appendChild(label);
    }
    if (!options.length) scroll.appendChild(el("p", gettext("Nothing to choose from yet."), "muted"));
    box.appendChild(scroll);
    form.appendChild(box);
    return () => apply(boxes.filter((b) => b.checked).map((b) => b.value));
  }

  /** @param {HTMLElement} form @param {string} label @param {string} value @param {string} name @param {boolean} [integer] */
  numberInput(form, label, value, name, integer = false) {
    const box = el("label", label, "field");
    const input = /** @type {HTMLInputElement} */ (el("input"));
    input.type = "number";
    input.step = integer ? "1" : "any";
    input.name = name;
    input.value = value;
    box.appendChild(input);
    form.appendChild(box);
    return input;
  }

  /** @param {HTMLElement} form @param {string} label @param {string} value @param {string} name */
  dateInput(form, label, value, name) {
    const box = el("label", label, "field");
    const input = /** @type {HTMLInputElement} */ (el("input"));
    input.type = "datetime-local";
    input.name = name;
    input.value = value.slice(0, 16);
    box.appendChild(input);
    form.appendChild(box);
    return input;
  }

  /** A popover under its anchor; Escape or a click elsewhere closes it, and focus goes back.
   * @param {HTMLElement} content @param {HTMLElement} anchor */
  showPopover(content, anchor) {
    this.closePopover();
    const popover = el("div", undefined, "dm-popover");
    popover.setAttribute("role", "dialog");
    popover.appendChild(content);
    const box = anchor.getBoundingClientRect();
    const host = root.getBoundingClientRect();
    popover.style.top = `${box.bottom - host.top + 4}px`;
    popover.style.left = `${Math.max(0, Math.min(box.left - host.left, host.width - 320))}px`;
    root.appendChild(popover);
    anchor.setAttribute("aria-expanded", "true");
    this.popover = popover;
    const close = (/** @type {Event} */ event) => {
      if (event instanceof KeyboardEvent ? event.key === "Escape" : !popover.contains(/** @type {Node} */ (event.target)) && !anchor.contains(/** @type {Node} */ (event.target))) {
        this.closePopover();
        anchor.focus();
      }
    };
    this.closeListener = close;
    document.addEventListener("keydown", close);
    document.addEventListener("mousedown", close);
    /** @type {HTMLElement|null} */ (popover.querySelector("input:not([type=hidden]), button, select"))?.focus();
    this.popoverAnchor = anchor;
  }

  closePopover() {
    if (!this.popover) return;
    this.popover.remove();
    this.popover = null;
    this.popoverAnchor?.setAttribute("aria-expanded", "false");
    if (this.closeListener) {
      document.removeEventListener("keydown", this.closeListener);
      document.removeEventListener("mousedown", this.closeListener);
    }
  }

  // ------------------------------------------------------------ columns

  keptLayout() {
    try {
      return JSON.parse(localStorage.getItem(LAYOUT_KEY) || "null");
    } catch (_) {
      return null;
    }
  }

  /** @param {{order: string[], hidden: string[]}} layout */
  keepLayout(layout) {
    this.layout = layout;
    localStorage.setItem(LAYOUT_KEY, JSON.stringify(layout));
    this.renderHead();
    this.renderBody();
  }

  visibleColumns() {
    return this.layout.order.filter((key) => !this.layout.hidden.includes(key)).map((key) => /** @type {Column} */ (BY_KEY.get(key)));
  }

  /** @param {HTMLElement} anchor */
  openColumns(anchor) {
    const box = el("div", undefined, "column-chooser");
    box.appendChild(el("p", gettext("Columns shown, in order"), "popover-title"));
    const list = el("ul");
    const draw = () => {
      list.replaceChildren();
      this.layout.order.forEach((key, n) => {
        const column = /** @type {Column} */ (BY_KEY.get(key));
        const item = el("li");
        item.dataset.column = key;
        const label = el("label", undefined, "check");
        const input = /** @type {HTMLInputElement} */ (el("input"));
        input.type = "checkbox";
        input.checked = !this.layout.hidden.includes(key);
        input.addEventListener("change", () => {
          const hidden = input.checked ? this.layout.hidden.filter((k) => k !== key) : [...this.layout.hidden, key];
          this.keepLayout({ ...this.layout, hidden });
        });
        label.append(input, ` ${column.label}`);
        item.appendChild(label);
        /** @param {string} text @param {string} name @param {number} step @param {boolean} disabled */
        const mover = (text, name, step, disabled) => {
          const button = el("button", text, "icon-button");
          button.type = "button";
          button.disabled = disabled;
          button.setAttribute("aria-label", interpolate(name, { column: column.label }, true));
          button.addEventListener("click", () => {
            this.keepLayout({ ...this.layout, order: moveColumn(this.layout.order, key, step) });
            draw();
            /** @type {HTMLElement|null} */ (list.querySelector(`li[data-column="${key}"] button[data-step="${step}"]:not([disabled])`))?.focus();
          });
          button.dataset.step = String(step);
          item.appendChild(button);
        };
        mover("↑", gettext("Move %(column)s up"), -1, n === 0);
        mover("↓", gettext("Move %(column)s down"), 1, n === this.layout.order.length - 1);
        list.appendChild(item);
      });
    };
    draw();
    box.appendChild(list);
    const reset = el("button", gettext("Back to the default columns"), "link-button");
    reset.type = "button";
    reset.addEventListener("click", () => {
      localStorage.removeItem(LAYOUT_KEY);
      this.keepLayout(columnLayout(null, COLUMNS.map((c) => c.key), COLUMNS.filter((c) => c.hidden).map((c) => c.key)));
      draw();
    });
    box.appendChild(reset);
    this.showPopover(box, anchor);
  }

  // ------------------------------------------------------------ the table

  renderHead() {
    const head = el("tr");
    const all = el("th", undefined, "select-cell");
    const pageBox = /** @type {HTMLInputElement} */ (el("input"));
    pageBox.type = "checkbox";
    pageBox.id = "dm-select-page";
    pageBox.setAttribute("aria-label", gettext("Select the items on this page"));
    const ids = this.rows.map((r) => r.id);
    const chosen = ids.filter((id) => this.allMatching || this.selected.has(id)).length;
    pageBox.checked = ids.length > 0 && chosen === ids.length;
    pageBox.indeterminate = chosen > 0 && chosen < ids.length;
    pageBox.addEventListener("change", () => {
      if (pageBox.checked) ids.forEach((id) => this.selected.add(id));
      else { this.allMatching = false; ids.forEach((id) => this.selected.delete(id)); }
      this.renderBody();
      this.renderSelection();
      this.renderHead();
    });
    all.appendChild(pageBox);
    head.appendChild(all);
    for (const column of this.visibleColumns()) {
      const th = el("th", undefined, column.cls || "");
      th.scope = "col";
      th.dataset.column = column.key;
      if (column.sort) {
        const direction = sortDirection(this.state.ordering, column.sort);
        th.setAttribute("aria-sort", direction);
        const button = el("button", column.label, "sort-button");
        button.type = "button";
        button.appendChild(el("span", direction === "ascending" ? " ▲" : direction === "descending" ? " ▼" : "", "sort-mark"));
        button.addEventListener("click", () => this.change({ ...this.state, ordering: nextOrdering(this.state.ordering, /** @type {string} */ (column.sort)), page: 1 }));
        th.appendChild(button);
      } else {
        th.appendChild(el("span", column.label, "column-name"));
      }
      if (column.filter) {
        const active = filterSet(column.filter, this.state);
        const funnel = el("button", undefined, `filter-button${active ? " active" : ""}`);
        funnel.appendChild(funnelIcon());
        funnel.type = "button";
        funnel.setAttribute("aria-label", interpolate(active ? gettext("Change the filter on %(column)s") : gettext("Filter on %(column)s"), { column: column.label }, true));
        funnel.setAttribute("aria-haspopup", "dialog");
        funnel.addEventListener("click", () => this.openFilter(column, funnel));
        th.appendChild(funnel);
      }
      head.appendChild(th);
    }
    const thead = /** @type {HTMLTableSectionElement} */ (this.table.tHead);
    thead.replaceChildren(head);
  }

  renderBody() {
    const body = /** @type {HTMLElement} */ (this.table.tBodies[0]);
    const columns = this.visibleColumns();
    if (!this.rows.length) {
      const cell = el("td", undefined, "empty-state");
      cell.colSpan = columns.length + 1;
      if (filterCount(this.state)) {
        cell.appendChild(el("p", gettext("No item matches these filters.")));
        const clear = el("button", gettext("Clear the filters"), "secondary");
        clear.type = "button";
        clear.addEventListener("click", () => this.change({ ...emptyState(), ordering: this.state.ordering }));
        cell.appendChild(clear);
      } else if (this.state.page > 1) {
        cell.appendChild(el("p", gettext("This page is past the last item.")));
      } else {
        cell.appendChild(el("p", gettext("This project has no items yet.")));
        if (canAct) {
          const link = el("a", gettext("Import a dataset"), "button");
          link.href = `/projects/${projectId}/data/`;
          cell.appendChild(link);
        }
      }
      const row = el("tr");
      row.appendChild(cell);
      body.replaceChildren(row);
      return;
    }
    const rows = this.rows.map((item, n) => {
      const row = el("tr", undefined, "item-row");
      row.dataset.id = String(item.id);
      row.tabIndex = n === this.cursor ? 0 : -1;
      const chosen = this.allMatching || this.selected.has(item.id);
      if (chosen) row.classList.add("selected");
      if (item.excluded) row.classList.add("excluded");
      const check = el("td", undefined, "select-cell");
      const box = /** @type {HTMLInputElement} */ (el("input"));
      box.type = "checkbox";
      box.checked = chosen;
      box.disabled = this.allMatching;
      box.setAttribute("aria-label", interpolate(gettext("Select item %(name)s"), { name: item.annotation_id }, true));
      check.appendChild(box);
      row.appendChild(check);
      for (const column of columns) {
        const cell = el("td", undefined, column.cls || "");
        const content = column.cell(item);
        if (typeof content === "string") cell.textContent = content; else cell.appendChild(content);
        row.appendChild(cell);
      }
      return row;
    });
    body.replaceChildren(...rows);
  }

  renderPager() {
    const pager = /** @type {HTMLElement} */ (root.querySelector(".dm-pager"));
    pager.replaceChildren();
    const pages = Math.max(1, Math.ceil(this.count / this.state.pageSize));
    /** @param {string} text @param {number} page @param {boolean} disabled @param {string} id */
    const go = (text, page, disabled, id) => {
      const button = el("button", text, "secondary");
      button.type = "button";
      button.id = id;
      button.disabled = disabled;
      button.addEventListener("click", () => { this.cursor = 0; this.change({ ...this.state, page }); });
      pager.appendChild(button);
    };
    go(gettext("‹ Previous"), this.state.page - 1, this.state.page <= 1, "dm-previous");
    pager.appendChild(el("span", interpolate(this.estimate ? gettext("Page %(page)s of about %(pages)s") : gettext("Page %(page)s of %(pages)s"),
      { page: formatNumber(this.state.page), pages: formatNumber(pages) }, true), "page-of"));
    go(gettext("Next ›"), this.state.page + 1, this.state.page >= pages, "dm-next");
    const sizeLabel = el("label", gettext("Rows per page"), "page-size");
    const size = /** @type {HTMLSelectElement} */ (el("select"));
    for (const n of PAGE_SIZES) {
      const option = /** @type {HTMLOptionElement} */ (el("option", String(n)));
      option.value = String(n);
      option.selected = n === this.state.pageSize;
      size.appendChild(option);
    }
    size.addEventListener("change", () => this.change({ ...this.state, pageSize: Number(size.value), page: 1 }));
    sizeLabel.appendChild(size);
    pager.appendChild(sizeLabel);
  }

  // ------------------------------------------------------------ selection and bulk actions

  clearSelection() {
    this.selected.clear();
    this.allMatching = false;
  }

  selectedCount() {
    return this.allMatching ? this.count : this.selected.size;
  }

  renderSelection() {
    const bar = /** @type {HTMLElement} */ (root.querySelector(".selection-bar"));
    const count = this.selectedCount();
    bar.hidden = count === 0;
    bar.replaceChildren();
    if (!count) return;
    bar.appendChild(el("strong", this.allMatching
      ? interpolate(this.estimate ? gettext("All about %(count)s matching items are selected.") : gettext("All %(count)s matching items are selected."), { count: formatNumber(count) }, true)
      : interpolate(ngettext("%(count)s item selected.", "%(count)s items selected.", count), { count: formatNumber(count) }, true), "selection-count"));
    const pageIds = this.rows.map((r) => r.id);
    if (!this.allMatching && this.count > this.selected.size && pageIds.every((id) => this.selected.has(id))) {
      this.toolButton(bar, "dm-select-all", interpolate(gettext("Select all %(count)s items matching the filter"), { count: formatNumber(this.count) }, true), () => {
        this.allMatching = true;
        this.render();
      });
    }
    this.toolButton(bar, "dm-clear-selection", gettext("Clear the selection"), () => { this.clearSelection(); this.render(); });
    if (!canAct) return;
    const label = el("label", undefined, "bulk-label");
    label.appendChild(el("span", gettext("Action"), "sr-only"));
    const select = /** @type {HTMLSelectElement} */ (el("select"));
    select.id = "dm-bulk-action";
    select.appendChild(el("option", gettext("Choose an action…"))).setAttribute("value", "");
    for (const action of BULK_ACTIONS.filter((a) => knownActions.includes(a.key))) {
      const option = /** @type {HTMLOptionElement} */ (el("option", action.label));
      option.value = action.key;
      select.appendChild(option);
    }
    label.appendChild(select);
    const apply = el("button", gettext("Apply"), "primary");
    apply.type = "button";
    apply.id = "dm-bulk-apply";
    apply.addEventListener("click", () => {
      const action = BULK_ACTIONS.find((a) => a.key === select.value);
      if (action) this.bulk(action); else this.say(gettext("Choose an action first."), "error");
    });
    bar.append(label, apply);
  }

  /** @param {{key: string, label: string, verb: string, danger?: boolean}} action */
  async bulk(action) {
    const count = this.selectedCount();
    const many = formatNumber(count);
    const target = this.allMatching ? gettext("every item the filter matches") : gettext("the selected items");
    const message = interpolate(ngettext("%(action)s: %(count)s item (%(target)s).", "%(action)s: %(count)s items (%(target)s).", count),
      { action: action.verb, count: many, target }, true)
      + (this.allMatching && this.estimate ? ` ${gettext("The count is an estimate; the server acts on the exact set.")}` : "");
    /** @type {Record<string, any>} */ const args = {};
    /** @type {import("./confirm_dialog.js").ConfirmOptions} */
    const question = { title: action.label.replace("…", ""), message, confirmLabel: interpolate(ngettext("%(verb)s %(count)s item", "%(verb)s %(count)s items", count), { verb: action.verb, count: many }, true), danger: action.danger };
    /** @type {() => void} */ let collect = () => {};
    if (action.key === "send_back") question.comment = { label: gettext("Comment for the annotators"), required: true };
    if (action.key === "assign_variant") {
      const box = el("label", gettext("Variant"), "field");
      const select = /** @type {HTMLSelectElement} */ (el("select"));
      select.name = "variant";
      for (const variant of choices.variants || []) {
        const option = /** @type {HTMLOptionElement} */ (el("option", variant.name));
        option.value = String(variant.id);
        select.appendChild(option);
      }
      box.appendChild(select);
      question.body = box;
      question.check = () => (select.value ? null : gettext("The project has no variant to assign."));
      collect = () => { args.variant = Number(select.value); };
    }
    if (action.key === "assign_annotators") {
      const form = el("div");
      const picked = this.setEditor(form, annotatorChoices(), [], () => this.state);
      const boxes = () => [...form.querySelectorAll("input[type=checkbox]:checked")].map((b) => Number(/** @type {HTMLInputElement} */ (b).value));
      question.body = form;
      question.check = () => (boxes().length ? null : gettext("Choose at least one annotator."));
      collect = () => { picked(); args.annotators = boxes(); };
    }
    const answer = await confirmAction(question);
    if (!answer.confirmed) return;
    collect();
    if (action.key === "send_back") args.comment = answer.comment;
    const response = await api(`${LIST_URL}bulk/`, "POST", { action: action.key, ...bulkTarget({ allMatching: this.allMatching, ids: this.selected }, this.state), args });
    if (!response.ok) { this.say(errorText(response.data), "error"); return; }
    this.say(interpolate(ngettext("%(action)s: %(touched)s item changed (%(matched)s chosen).", "%(action)s: %(touched)s items changed (%(matched)s chosen).", response.data.touched),
      { action: action.label.replace("…", ""), touched: formatNumber(response.data.touched), matched: formatNumber(response.data.matched) }, true), "ok");
    this.clearSelection();
    await this.load();
  }

  // ------------------------------------------------------------ keyboard and clicks

  /** @param {MouseEvent} event */
  onTableClick(event) {
    const target = /** @type {HTMLElement} */ (event.target);
    const row = /** @type {HTMLElement|null} */ (target.closest("tr.item-row"));
    if (!row) return;
    const id = Number(row.dataset.id);
    if (target instanceof HTMLInputElement && target.type === "checkbox") {
      this.toggle(id);
      return;
    }
    if (target.closest("a, button, .select-cell")) return;
    window.location.href = `${PAGE_URL}${id}/`;
  }

  /** @param {number} id */
  toggle(id) {
    if (this.allMatching) return;
    if (this.selected.has(id)) this.selected.delete(id); else this.selected.add(id);
    this.renderBody();
    this.renderHead();
    this.renderSelection();
    this.focusRow(this.rows.findIndex((r) => r.id === id));
  }

  /** @param {number} n */
  focusRow(n) {
    const rows = /** @type {NodeListOf<HTMLElement>} */ (this.table.querySelectorAll("tr.item-row"));
    if (!rows.length) return;
    this.cursor = Math.max(0, Math.min(n, rows.length - 1));
    rows.forEach((row, k) => { row.tabIndex = k === this.cursor ? 0 : -1; });
    rows[this.cursor].focus();
  }

  /** @param {KeyboardEvent} event */
  onRowKey(event) {
    const row = /** @type {HTMLElement} */ (event.target);
    if (!row.classList?.contains("item-row")) return;
    const n = [...this.table.querySelectorAll("tr.item-row")].indexOf(row);
    if (event.key === "ArrowDown" || event.key === "j") { event.preventDefault(); this.focusRow(n + 1); }
    else if (event.key === "ArrowUp" || event.key === "k") { event.preventDefault(); this.focusRow(n - 1); }
    else if (event.key === "Enter") { event.preventDefault(); window.location.href = `${PAGE_URL}${row.dataset.id}/`; }
    else if (event.key === "x" || event.key === " ") { event.preventDefault(); this.toggle(Number(row.dataset.id)); }
  }

  /** "/" goes to the search from anywhere but a text field. @param {KeyboardEvent} event */
  onKey(event) {
    const target = /** @type {HTMLElement} */ (event.target);
    if (event.key !== "/" || target.closest("input, textarea, select, [contenteditable]")) return;
    event.preventDefault();
    this.search.focus();
  }
}

if (root) {
  const manager = new DataManager();
  /** @type {any} */ (window).rationaleDataManager = manager;
  manager.start();
}
