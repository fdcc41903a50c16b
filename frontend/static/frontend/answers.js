// @ts-check
// The annotator's previous items: their submitted answers in the project, newest first, a
// page at a time; one opened beside the list, its sets shown on the text, and changed while
// it is still open to them (saved as a new version). Keys: p and n move to the previous
// (older) and next (newer) answer, 1-9 choose a set, z (or Ctrl+Z) undoes a change of the
// highlights and y (Ctrl+Y, Ctrl+Shift+Z) redoes it, as in the workspace, Enter saves.

import { api, el, errorText } from "./http.js";
import { formatDateTime, formatNumber } from "./format.js";
import { RationaleSets } from "./rationale_sets.js";
import { codeUnitsOf } from "./text_offsets.js";
import { UndoHistory } from "./undo_history.js";

const PAGE = 20;

/** @param {string|null} code */
function closedText(code) {
  /** @type {Record<string, string>} */
  const words = {
    participant: gettext("Kept as you gave it: a study's answers do not change."),
    reviewed: gettext("A reviewer has scored it: it can no longer change."),
    complete: gettext("Its item has all its annotations: it can no longer change."),
    project_archived: gettext("The project is archived."),
    item_deleted: gettext("The item was deleted."),
  };
  return code ? words[code] ?? code : gettext("Open: you can still change it.");
}

class AnswersPage {
  /** @param {HTMLElement} root */
  constructor(root) {
    this.root = root;
    this.projectId = root.dataset.projectId;
    this.list = /** @type {HTMLElement} */ (root.querySelector(".answers-list"));
    this.view = /** @type {HTMLElement} */ (root.querySelector(".answer-view"));
    this.message = /** @type {HTMLElement} */ (root.querySelector(".message"));
    this.offset = 0;
    this.count = 0;
    /** @type {any[]} */ this.rows = [];
    /** @type {any} */ this.answer = null;
    /** @type {HTMLElement|null} */ this.legend = null;
    /** @type {HTMLSelectElement|null} */ this.labelSelect = null;
    this.rationale = new RationaleSets();
    /** The opened answer's earlier highlights since it was opened, as their entries.
     * @type {UndoHistory<import("./rationale_sets.js").SetEntries[]>} */
    this.history = new UndoHistory();
    /** @type {HTMLButtonElement|null} */ this.undoButton = null;
    /** @type {HTMLButtonElement|null} */ this.redoButton = null;
    /** @type {HTMLElement[][]} */ this.tokenNodes = [];
    this.changed = false;
    /** The label was changed (undo steps through the highlights only). */
    this.labelChanged = false;
    document.addEventListener("keydown", (event) => this.onKey(event));
  }

  async start() {
    const wanted = new URLSearchParams(window.location.search).get("open");
    await this.loadPage();
    if (wanted === "latest" && this.rows.length) await this.open(this.rows[0].id);
    else if (wanted && /^\d+$/.test(wanted)) await this.open(Number(wanted));
  }

  async loadPage() {
    const response = await api(`/api/projects/${this.projectId}/answers/?limit=${PAGE}&offset=${this.offset}`, "GET");
    if (!response.ok) {
      this.list.replaceChildren(el("p", errorText(response.data), "error"));
      this.rows = [];
      return;
    }
    this.rows = response.data.results;
    this.count = response.data.count;
    this.renderList();
  }

  renderList() {
    if (!this.rows.length) {
      this.list.replaceChildren(el("p", gettext("You have not submitted any item in this project yet."), "muted"));
      return;
    }
    const table = el("table", undefined, "answers-table");
    const caption = el("caption", interpolate(gettext("%(from)s–%(to)s of %(count)s, newest first"), {
      from: this.offset + 1, to: this.offset + this.rows.length, count: this.count,
    }, true));
    const head = el("tr");
    for (const name of [gettext("Item"), gettext("Submitted"), gettext("Your answer"), gettext("Version"), gettext("State")]) {
      const th = el("th", name);
      th.setAttribute("scope", "col");
      head.appendChild(th);
    }
    table.append(caption, el("thead"), el("tbody"));
    /** @type {HTMLElement} */ (table.tHead).appendChild(head);
    for (const row of this.rows) {
      const tr = el("tr");
      tr.dataset.answerId = String(row.id);
      if (this.answer && this.answer.id === row.id) tr.setAttribute("aria-current", "true");
      const item = el("td");
      const open = el("button", row.item, "link-button");
      open.type = "button";
      open.addEventListener("click", () => this.open(row.id));
      item.append(open, el("div", row.snippet ?? "", "muted snippet"));
      const summary = interpolate(ngettext("%(tokens)s token in %(sets)s set", "%(tokens)s tokens in %(sets)s sets", row.tokens), {
        tokens: formatNumber(row.tokens, 0), sets: formatNumber(row.set_count, 0),
      }, true);
      const answer = el("td", row.label ? `${row.label} · ${summary}` : summary);
      tr.append(item, el("td", formatDateTime(row.submitted_at)), answer, el("td", String(row.version)),
        el("td", row.closed ? closedText(row.closed) : gettext("Open"), row.closed ? "muted" : ""));
      /** @type {HTMLElement} */ (table.tBodies[0]).appendChild(tr);
    }
    const pager = el("div", undefined, "pager");
    const newer = el("button", gettext("Newer"));
    newer.type = "button";
    newer.disabled = this.offset === 0;
    newer.addEventListener("click", () => { this.offset = Math.max(0, this.offset - PAGE); this.loadPage(); });
    const older = el("button", gettext("Older"));
    older.type = "button";
    older.disabled = this.offset + this.rows.length >= this.count;
    older.addEventListener("click", () => { this.offset += PAGE; this.loadPage(); });
    pager.append(newer, older);
    this.list.replaceChildren(table, pager);
  }

  /** @param {number} id */
  async open(id) {
    if (this.changed && !window.confirm(gettext("Leave this answer without saving your change?"))) return;
    const response = await api(`/api/answers/${id}/`, "GET");
    if (!response.ok) {
      this.say(errorText(response.data), true);
      return;
    }
    this.show(response.data);
    const url = new URL(window.location.href);
    url.searchParams.set("open", String(id));
    window.history.replaceState(null, "", url);
    this.view.focus();
  }

  /** @param {any} answer */
  show(answer) {
    this.answer = answer;
    this.changed = false;
    this.labelChanged = false;
    this.history = new UndoHistory();
    /** @type {Array<Array<[string, number[]]>>} */
    const entries = answer.rationale_sets.map((/** @type {any[]} */ spans) => {
      /** @type {Map<string, number[]>} */ const byDoc = new Map();
      for (const span of spans) {
        const tokens = byDoc.get(span.docid) ?? [];
        for (let t = span.start_token; t < span.end_token; t += 1) tokens.push(t);
        byDoc.set(span.docid, tokens);
      }
      return [...byDoc.entries()];
    });
    this.rationale = RationaleSets.fromEntries(entries, 0);
    const open = answer.closed === null;
    const title = el("h2", interpolate(gettext("Item %(item)s, round %(round)s, version %(version)s"), {
      item: answer.item.annotation_id, round: answer.round, version: answer.version,
    }, true));
    const state = el("p", closedText(answer.closed), open ? "answer-state open" : "answer-state muted");
    const nav = el("div", undefined, "answer-nav");
    nav.append(
      this.navButton(gettext("Previous (p)"), answer.older),
      this.navButton(gettext("Next (n)"), answer.newer),
    );
    this.view.replaceChildren(title, state, nav);
    this.undoButton = null;
    this.redoButton = null;
    if (open) {
      const edits = el("div", undefined, "answer-edits");
      this.undoButton = this.editButton(gettext("Undo (z)"), "undo", () => this.undo());
      this.redoButton = this.editButton(gettext("Redo (y)"), "redo", () => this.redo());
      edits.append(this.undoButton, this.redoButton);
      this.view.appendChild(edits);
      this.renderEdits();
    }
    if (answer.item.query) this.view.appendChild(el("p", answer.item.query, "query"));
    this.legend = el("div", undefined, "answer-sets");
    this.view.appendChild(this.legend);
    this.renderLegend();
    this.tokenNodes = [];
    answer.item.documents.forEach((/** @type {any} */ doc, /** @type {number} */ docIndex) => {
      const block = el("div", undefined, "answer-doc");
      block.lang = "";
      const tokens = /** @type {number[][]} */ (doc.tokens);
      /** @type {HTMLElement[]} */ const nodes = [];
      // The server's offsets count code points; the text is sliced in UTF-16 units.
      const at = codeUnitsOf(doc.text);
      tokens.forEach(([from, to], i) => {
        const start = at(from), end = at(to);
        if (i > 0) block.appendChild(document.createTextNode(doc.text.slice(at(tokens[i - 1][1]), start)));
        const span = el("span", doc.text.slice(start, end), "tok");
        if (open) {
          span.addEventListener("click", () => this.toggle(docIndex, i));
        }
        nodes.push(span);
        block.appendChild(span);
      });
      this.tokenNodes.push(nodes);
      this.view.appendChild(block);
    });
    this.paint();
    if (answer.labels.length && answer.labels_from_annotators) {
      const label = el("label", gettext("Label") + " ");
      const select = el("select");
      select.appendChild(el("option", "—"));
      /** @type {HTMLOptionElement} */ (select.options[0]).value = "";
      for (const name of answer.labels) {
        const option = el("option", name);
        option.value = name;
        if (name === answer.label) option.selected = true;
        select.appendChild(option);
      }
      select.disabled = !open;
      select.addEventListener("change", () => { this.changed = true; this.labelChanged = true; });
      this.labelSelect = select;
      label.appendChild(select);
      this.view.appendChild(label);
    } else {
      this.labelSelect = null;
    }
    if (open) {
      const save = el("button", gettext("Save the change (Enter)"), "primary");
      save.type = "button";
      save.addEventListener("click", () => this.save());
      this.view.appendChild(save);
    }
    this.view.appendChild(this.versionList(answer.versions));
    for (const tr of this.list.querySelectorAll("tr[data-answer-id]")) {
      const row = /** @type {HTMLElement} */ (tr);
      if (row.dataset.answerId === String(answer.id)) row.setAttribute("aria-current", "true");
      else row.removeAttribute("aria-current");
    }
  }

  /** @param {string} text @param {number|null} id */
  navButton(text, id) {
    const button = el("button", text);
    button.type = "button";
    button.disabled = id === null;
    if (id !== null) button.addEventListener("click", () => this.open(id));
    return button;
  }

  renderLegend() {
    if (!this.legend) return;
    const chips = [];
    for (let n = 0; n < this.rationale.count; n += 1) {
      const chip = el("button", interpolate(gettext("Set %(number)s"), { number: n + 1 }, true), `legend-set set-${n % 6}`);
      chip.type = "button";
      chip.dataset.setNumber = String(n + 1);
      chip.setAttribute("aria-pressed", String(n === this.rationale.current));
      chip.addEventListener("click", () => { this.rationale.choose(n); this.renderLegend(); this.paint(); });
      chips.push(chip);
    }
    this.legend.replaceChildren(...chips);
  }

  /** @param {string} text @param {string} cls @param {() => void} action */
  editButton(text, cls, action) {
    const button = /** @type {HTMLButtonElement} */ (el("button", text, `secondary ${cls}`));
    button.type = "button";
    button.addEventListener("click", action);
    return button;
  }

  /** Undo and Redo can be pressed when there is a step to take. */
  renderEdits() {
    if (this.undoButton) this.undoButton.disabled = this.history.past.length === 0;
    if (this.redoButton) this.redoButton.disabled = this.history.future.length === 0;
  }

  /** @param {number} doc @param {number} token */
  toggle(doc, token) {
    this.history.record(this.rationale.toEntries());
    this.rationale.toggle(this.answer.item.documents[doc].docid, token);
    this.afterEdit();
  }

  undo() {
    if (!this.answer || this.answer.closed !== null) return;
    const previous = this.history.undo(this.rationale.toEntries());
    if (!previous) return;
    this.rationale = RationaleSets.fromEntries(previous, this.rationale.current);
    this.afterEdit();
  }

  redo() {
    if (!this.answer || this.answer.closed !== null) return;
    const next = this.history.redo(this.rationale.toEntries());
    if (!next) return;
    this.rationale = RationaleSets.fromEntries(next, this.rationale.current);
    this.afterEdit();
  }

  /** Undone back to the answer as it was opened (and the label unchanged), there is nothing
   * to save nor to lose on leaving. */
  afterEdit() {
    this.changed = this.history.past.length > 0 || this.labelChanged;
    this.paint();
    this.renderEdits();
  }

  paint() {
    const setClass = `set-${this.rationale.current % 6}`;
    this.tokenNodes.forEach((nodes, doc) => {
      const docid = this.answer.item.documents[doc].docid;
      nodes.forEach((node, token) => {
        const on = this.rationale.has(docid, token);
        node.className = on ? `tok sel ${setClass}` : "tok";
      });
    });
  }

  /** @param {any[]} versions */
  versionList(versions) {
    const box = el("details", undefined, "answer-versions");
    box.appendChild(el("summary", interpolate(ngettext("%(count)s version", "%(count)s versions", Math.max(1, versions.length)), {
      count: Math.max(1, versions.length),
    }, true)));
    const list = el("ol");
    for (const version of versions) {
      const tokens = version.rationale_sets.flat().reduce((/** @type {number} */ sum, /** @type {any} */ s) => sum + s.end_token - s.start_token, 0);
      list.appendChild(el("li", interpolate(gettext("%(when)s: %(tokens)s tokens in %(sets)s sets"), {
        when: formatDateTime(version.created_at), tokens, sets: version.rationale_sets.length,
      }, true)));
    }
    if (!versions.length) list.appendChild(el("li", gettext("As you submitted it.")));
    box.appendChild(list);
    return box;
  }

  async save() {
    const answer = this.answer;
    if (!answer || answer.closed !== null) return;
    const response = await api(`/api/answers/${answer.id}/change/`, "POST", {
      base_version: answer.version,
      rationale_sets: this.rationale.spans(),
      label: this.labelSelect ? this.labelSelect.value || null : answer.label,
      time_spent_ms: answer.time_spent_ms,
    });
    if (!response.ok) {
      this.say(errorText(response.data), true);
      return;
    }
    this.show(response.data);
    this.say(interpolate(gettext("Saved as version %(version)s."), { version: response.data.version }, true), false);
    await this.loadPage();
  }

  /** @param {string} text @param {boolean} isError */
  say(text, isError) {
    this.message.textContent = text;
    this.message.classList.toggle("error", isError);
  }

  /** @param {KeyboardEvent} event */
  onKey(event) {
    const target = /** @type {HTMLElement} */ (event.target);
    if (["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) || event.altKey || !this.answer) return;
    // z and y, with or without Ctrl (or Cmd), and Ctrl+Shift+Z, as in the workspace.
    const key = event.key.toLowerCase();
    if (key === "z" || key === "y") {
      if (event.shiftKey && !(event.ctrlKey || event.metaKey)) return;
      event.preventDefault();
      if (key === "y" || event.shiftKey) this.redo(); else this.undo();
      return;
    }
    if (event.ctrlKey || event.metaKey) return;
    if (event.key === "p" && this.answer.older !== null) this.open(this.answer.older);
    else if (event.key === "n" && this.answer.newer !== null) this.open(this.answer.newer);
    else if (/^[1-9]$/.test(event.key) && Number(event.key) <= this.rationale.count) {
      this.rationale.choose(Number(event.key) - 1);
      this.renderLegend();
      this.paint();
    } else if (event.key === "Enter" && target.tagName !== "BUTTON" && target.tagName !== "SUMMARY") {
      event.preventDefault();
      this.save();
    }
  }
}

const root = document.getElementById("answers");
if (root) new AnswersPage(root).start();
