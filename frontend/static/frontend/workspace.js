// @ts-check
// Annotator workspace: select tokens into rationale sets, autosave drafts, submit once.
// Every string from the server is inserted with textContent: imported text is data.

/** @typedef {{docid: string, text: string, tokens: number[][], sentences: number[][]}} Doc */
/** @typedef {{id: number, status: string, draft: any, item: {query: string|null, label: string|null, documents: Doc[]},
 *   variant: {name: string, version: number, text: string, examples: any[]},
 *   project: {id: number, name: string, labels: string[], min_highlight: number}}} Assignment */

import { api, fmt } from "./http.js";

const COLOURS = 6;

/** @param {string} tag @param {string} [cls] @param {string} [text] */
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

class Workspace {
  /** @param {HTMLElement} root */
  constructor(root) {
    this.root = root;
    this.projectId = root.dataset.projectId;
    this.assignmentId = root.dataset.assignmentId;
    /** @type {Assignment|null} */ this.assignment = null;
    /** @type {Array<Map<string, Set<number>>>} */ this.sets = [new Map()];
    this.current = 0;
    /** @type {{doc: number, token: number}} */ this.cursor = { doc: 0, token: 0 };
    /** @type {string[]} */ this.undoStack = [];
    /** @type {HTMLElement[][]} */ this.tokenNodes = [];
    this.clientUuid = "";
    this.elapsedMs = 0;
    this.visibleSince = performance.now();
    /** @type {{doc: number, token: number, mode: "add"|"remove"}|null} */ this.drag = null;
    this.dragMoved = false;
    /** @type {{doc: number, token: number}|null} */ this.lastClicked = null;
    this.saveTimer = 0;
    this.submitting = false;
    this.testMode = false;
    document.addEventListener("visibilitychange", () => this.trackVisibility());
    document.addEventListener("keydown", (e) => this.onKey(e));
    document.addEventListener("mouseup", () => this.endDrag());
  }

  trackVisibility() {
    if (document.visibilityState === "hidden") {
      this.elapsedMs += performance.now() - this.visibleSince;
    } else {
      this.visibleSince = performance.now();
    }
  }

  timeSpent() {
    const running = document.visibilityState === "visible" ? performance.now() - this.visibleSince : 0;
    return Math.round(this.elapsedMs + running);
  }

  async start() {
    this.testMode = false;
    let response = this.assignmentId
      ? await api(`/api/assignments/${this.assignmentId}/`, "GET")
      : await api(`/api/projects/${this.projectId}/assignments/next/`, "POST");
    if (response.status === 403 && response.data && response.data.code === "qualification_test") {
      // Not yet qualified: the same workspace serves the test's items, one at a time.
      response = await api(`/api/projects/${this.projectId}/qualification/next/`, "POST");
      this.testMode = response.ok;
    }
    if (response.status === 403 && response.data && response.data.code) {
      this.renderRefusal(response.data);
      return;
    }
    if (!response.ok) {
      this.showMessage(response.data && response.data.detail ? response.data.detail : `Error ${response.status}`, "error");
      this.root.querySelector(".workspace-body")?.replaceChildren();
      return;
    }
    if (!response.data.id) {
      this.renderDone(response.data);
      return;
    }
    this.load(response.data);
    if (this.testMode) this.renderTestBanner(response.data.test);
    else {
      this.loadProgress();
      if (response.data.round > 1) this.loadFeedback(response.data.id);
    }
  }

  /** Why this worker is not served work, in plain words. @param {any} data */
  renderRefusal(data) {
    const body = /** @type {HTMLElement} */ (this.root.querySelector(".workspace-body"));
    const box = el("div", `refusal refusal-${data.code}`);
    box.appendChild(el("h2", "", {
      pending_selection: "Waiting for a decision",
      not_qualified: "Not qualified for this project",
      blocked: "Blocked on this project",
    }[/** @type {string} */ (data.code)] || "Not available"));
    box.appendChild(el("p", "", data.detail));
    if (data.reason) box.appendChild(el("p", "muted", `Why: ${data.reason}`));
    body.replaceChildren(box);
    this.assignment = null;
    this.root.dataset.ready = "true";
    this.root.dataset.refused = data.code;
  }

  /** @param {{attempt: number, max_attempts: number, position: number, total: number}} test */
  renderTestBanner(test) {
    const banner = el("div", "test-banner",
      `Qualification test: item ${test.position} of ${test.total} (attempt ${test.attempt} of ${test.max_attempts}). ` +
      "Your answers are scored when the test is complete.");
    const body = /** @type {HTMLElement} */ (this.root.querySelector(".workspace-body"));
    body.prepend(banner);
    this.root.querySelector(".progress")?.remove();
    this.root.dataset.mode = "test";
  }

  /** The reviewers' verdict on the previous round, shown above a revision. @param {number} id */
  async loadFeedback(id) {
    const response = await api(`/api/assignments/${id}/feedback/`, "GET");
    if (!response.ok || !response.data.revision) return;
    const f = response.data;
    const box = el("section", "feedback");
    box.appendChild(el("h2", "", `Revision: round ${f.round} of ${f.max_rounds}`));
    const failed = (f.verdict && f.verdict.failed) || [];
    box.appendChild(el("p", "", failed.length
      ? `The reviewers found these below the bar: ${failed.map((/** @type {string} */ p) =>
        `${p} (mean ${fmt(f.verdict.means[p])}, needs ${fmt(f.thresholds[p])})`).join("; ")}.`
      : "Please revise your highlights."));
    box.appendChild(el("p", "muted", "Your previous highlights are loaded below; change them and submit again."));
    const table = el("table", "grid feedback-scores");
    const head = el("tr");
    ["Reviewer", "Set", "Sufficiency (1–3)", "Compactness (1–4)", "Comprehensiveness (1–3)", "Comment"].forEach((h) => head.appendChild(el("th", "", h)));
    table.appendChild(head);
    for (const review of f.reviews) {
      const sets = review.sets.length ? review.sets : [{ position: null, sufficiency: null, compactness: null, comment: "" }];
      sets.forEach((/** @type {any} */ set, /** @type {number} */ n) => {
        const row = el("tr");
        [review.reviewer, set.position === null ? "" : `Set ${set.position + 1}`, fmt(set.sufficiency), fmt(set.compactness),
          n === 0 ? fmt(review.comprehensiveness) : "", [set.comment, n === 0 ? review.comment : ""].filter(Boolean).join(" · ")]
          .forEach((text) => row.appendChild(el("td", "", text)));
        table.appendChild(row);
      });
    }
    box.appendChild(table);
    const body = /** @type {HTMLElement} */ (this.root.querySelector(".workspace-body"));
    body.prepend(box);
    this.root.dataset.revision = String(f.round);
  }

  async loadProgress() {
    if (!this.assignment) return;
    const response = await api(`/api/projects/${this.assignment.project.id}/progress/mine/`, "GET");
    const box = this.root.querySelector(".progress");
    if (response.ok && box) {
      const p = response.data;
      box.textContent = `Done by you: ${p.submitted_by_you} · your variant: ${p.variant_submitted} / ${p.variant_quota}`;
    }
  }

  /** @param {Assignment} assignment */
  load(assignment) {
    this.assignment = assignment;
    this.sets = [new Map()];
    this.current = 0;
    this.undoStack = [];
    this.cursor = { doc: 0, token: 0 };
    this.elapsedMs = 0;
    this.visibleSince = performance.now();
    this.clientUuid = crypto.randomUUID();
    const draft = assignment.draft || this.localDraft();
    if (draft) this.restore(draft);
    this.render();
    this.root.dataset.assignment = String(assignment.id);
  }

  localKey() { return `rw-draft-${this.testMode ? "test-" : ""}${this.assignment ? this.assignment.id : "none"}`; }

  localDraft() {
    try { return JSON.parse(localStorage.getItem(this.localKey()) || "null"); } catch (_) { return null; }
  }

  /** @param {any} draft */
  restore(draft) {
    if (!draft || !Array.isArray(draft.sets)) return;
    this.sets = draft.sets.map((/** @type {[string, number[]][]} */ entries) =>
      new Map(entries.map(([docid, tokens]) => [docid, new Set(tokens)])));
    if (this.sets.length === 0) this.sets = [new Map()];
    this.current = Math.min(draft.current || 0, this.sets.length - 1);
    if (typeof draft.client_uuid === "string") this.clientUuid = draft.client_uuid;
    if (typeof draft.elapsed_ms === "number") this.elapsedMs = draft.elapsed_ms;
  }

  serialize() {
    return {
      sets: this.sets.map((set) => [...set.entries()].map(([docid, tokens]) => [docid, [...tokens].sort((a, b) => a - b)])),
      current: this.current,
      client_uuid: this.clientUuid,
      elapsed_ms: this.timeSpent(),
    };
  }

  // ------------------------------------------------------------ rendering

  render() {
    const a = /** @type {Assignment} */ (this.assignment);
    const body = /** @type {HTMLElement} */ (this.root.querySelector(".workspace-body"));
    body.replaceChildren();

    const instructions = el("details", "instructions");
    instructions.open = true;
    instructions.appendChild(el("summary", "", `Instructions (${a.variant.name}, version ${a.variant.version})`));
    instructions.appendChild(el("p", "instruction-text", a.variant.text));
    for (const example of a.variant.examples || []) {
      const box = el("div", "example");
      box.appendChild(el("span", "muted", "Example: "));
      const marked = new Set(example.highlighted);
      example.tokens.forEach((/** @type {string} */ token, /** @type {number} */ i) => {
        box.appendChild(el("span", marked.has(i) ? "tok example-on" : "tok", token));
        box.appendChild(document.createTextNode(" "));
      });
      if (example.label) box.appendChild(el("span", "muted", ` → ${example.label}`));
      if (example.note) box.appendChild(el("p", "muted", example.note));
      instructions.appendChild(box);
    }
    body.appendChild(instructions);

    const facts = el("div", "facts-row");
    if (a.item.query) facts.appendChild(el("div", "query", `Question: ${a.item.query}`));
    facts.appendChild(el("div", "gold-label", `Answer: ${a.item.label ?? "(none)"}`));
    facts.appendChild(el("div", "progress", "Progress: …"));
    body.appendChild(facts);

    this.tokenNodes = [];
    a.item.documents.forEach((doc, d) => body.appendChild(this.renderDocument(doc, d)));

    const legend = el("div", "legend");
    legend.setAttribute("aria-label", "Rationale sets");
    body.appendChild(legend);

    const controls = el("div", "controls");
    const buttons = [
      ["New set (n)", () => this.nextSet()],
      ["Undo (z)", () => this.undo()],
      ["Clear set", () => this.clearSet(false)],
      ["Clear all", () => this.clearSet(true)],
      ["Submit (Enter)", () => this.submit()],
    ];
    if (!this.testMode) buttons.splice(4, 0, ["Skip item", () => this.skip()]);
    for (const [label, action] of buttons) {
      const button = el("button", "", /** @type {string} */ (label));
      button.type = "button";
      button.addEventListener("click", /** @type {() => void} */ (action));
      controls.appendChild(button);
    }
    body.appendChild(controls);
    body.appendChild(el("p", "muted keys",
      "Mouse: click a word, drag across words, shift-click to extend. Keys: ← → move, space toggles, " +
      "shift+← → extends, n new set, 1–9 choose set, z undo, Enter submits."));
    this.refreshAll();
    this.root.dataset.ready = "true";
    performance.mark("workspace-ready");
  }

  /** @param {Doc} doc @param {number} d */
  renderDocument(doc, d) {
    const box = el("div", "document");
    box.dataset.docid = doc.docid;
    const fragment = document.createDocumentFragment();
    /** @type {HTMLElement[]} */ const nodes = [];
    let previous = 0;
    doc.tokens.forEach(([start, end], i) => {
      if (start > previous) fragment.appendChild(document.createTextNode(doc.text.slice(previous, start)));
      const span = el("span", "tok", doc.text.slice(start, end));
      span.dataset.d = String(d);
      span.dataset.i = String(i);
      nodes.push(span);
      fragment.appendChild(span);
      previous = end;
    });
    if (previous < doc.text.length) fragment.appendChild(document.createTextNode(doc.text.slice(previous)));
    box.appendChild(fragment);
    box.addEventListener("mousedown", (e) => this.onMouseDown(/** @type {MouseEvent} */ (e)));
    box.addEventListener("mouseover", (e) => this.onMouseOver(/** @type {MouseEvent} */ (e)));
    this.tokenNodes.push(nodes);
    return box;
  }

  /** @param {number} d @param {number} i */
  paintToken(d, i) {
    const node = this.tokenNodes[d][i];
    const docid = /** @type {Assignment} */ (this.assignment).item.documents[d].docid;
    let first = -1;
    let count = 0;
    this.sets.forEach((set, s) => {
      if (set.get(docid)?.has(i)) { count += 1; if (first < 0) first = s; }
    });
    node.className = "tok" + (first >= 0 ? ` sel set-${first % COLOURS}` : "") + (count > 1 ? " multi" : "")
      + (this.cursor.doc === d && this.cursor.token === i ? " cursor" : "");
  }

  refreshAll() {
    this.tokenNodes.forEach((nodes, d) => nodes.forEach((_, i) => this.paintToken(d, i)));
    this.renderLegend();
  }

  renderLegend() {
    const legend = /** @type {HTMLElement} */ (this.root.querySelector(".legend"));
    legend.replaceChildren();
    this.sets.forEach((set, s) => {
      const count = [...set.values()].reduce((n, tokens) => n + tokens.size, 0);
      const chip = el("button", `legend-set set-${s % COLOURS}${s === this.current ? " current" : ""}`,
        `Set ${s + 1}: ${count} token${count === 1 ? "" : "s"}`);
      chip.type = "button";
      chip.dataset.set = String(s);
      chip.addEventListener("click", () => { this.current = s; this.renderLegend(); });
      legend.appendChild(chip);
    });
  }

  // ------------------------------------------------------------ editing

  remember() {
    this.undoStack.push(JSON.stringify(this.serialize().sets));
    if (this.undoStack.length > 200) this.undoStack.shift();
  }

  /** @param {number} d @param {number} from @param {number} to @param {"add"|"remove"} mode */
  applyRange(d, from, to, mode) {
    const docid = /** @type {Assignment} */ (this.assignment).item.documents[d].docid;
    const set = this.sets[this.current];
    let tokens = set.get(docid);
    if (!tokens) { tokens = new Set(); set.set(docid, tokens); }
    const [lo, hi] = from <= to ? [from, to] : [to, from];
    for (let i = lo; i <= hi; i += 1) {
      if (mode === "add") tokens.add(i); else tokens.delete(i);
      this.paintToken(d, i);
    }
    if (tokens.size === 0) set.delete(docid);
  }

  changed() {
    this.renderLegend();
    window.clearTimeout(this.saveTimer);
    this.saveTimer = window.setTimeout(() => this.saveDraft(), 600);
    try { localStorage.setItem(this.localKey(), JSON.stringify(this.serialize())); } catch (_) { /* full */ }
  }

  async saveDraft() {
    if (!this.assignment || this.submitting || this.testMode) return;
    const response = await api(`/api/assignments/${this.assignment.id}/draft/`, "PUT", { draft: this.serialize() });
    this.root.dataset.draftSaved = response.ok ? "true" : "false";
    if (response.ok) this.showMessage("Draft saved.", "muted");
  }

  /** @param {MouseEvent} event */
  onMouseDown(event) {
    const target = /** @type {HTMLElement} */ (event.target);
    if (!target.classList.contains("tok") || target.dataset.i === undefined) return;
    event.preventDefault();
    const d = Number(target.dataset.d);
    const i = Number(target.dataset.i);
    this.remember();
    const docid = /** @type {Assignment} */ (this.assignment).item.documents[d].docid;
    if (event.shiftKey && this.lastClicked && this.lastClicked.doc === d) {
      this.applyRange(d, this.lastClicked.token, i, "add");
      this.moveCursor(d, i);
      this.changed();
      return;
    }
    const selected = this.sets[this.current].get(docid)?.has(i);
    this.drag = { doc: d, token: i, mode: selected ? "remove" : "add" };
    this.applyRange(d, i, i, this.drag.mode);
    this.lastClicked = { doc: d, token: i };
    this.moveCursor(d, i);
  }

  /** @param {MouseEvent} event */
  onMouseOver(event) {
    if (!this.drag) return;
    const target = /** @type {HTMLElement} */ (event.target);
    if (!target.classList.contains("tok") || Number(target.dataset.d) !== this.drag.doc) return;
    this.applyRange(this.drag.doc, this.drag.token, Number(target.dataset.i), this.drag.mode);
    this.moveCursor(this.drag.doc, Number(target.dataset.i));
  }

  endDrag() {
    if (!this.drag) return;
    this.drag = null;
    this.changed();
  }

  /** @param {number} d @param {number} i */
  moveCursor(d, i) {
    const old = this.cursor;
    this.cursor = { doc: d, token: i };
    if (this.tokenNodes[old.doc] && this.tokenNodes[old.doc][old.token]) this.paintToken(old.doc, old.token);
    this.paintToken(d, i);
  }

  /** @param {KeyboardEvent} event */
  onKey(event) {
    if (!this.assignment || this.submitting) return;
    const target = /** @type {HTMLElement} */ (event.target);
    if (["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName)) return;
    const { doc, token } = this.cursor;
    const count = this.tokenNodes[doc].length;
    if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
      event.preventDefault();
      let d = doc;
      let i = token + (event.key === "ArrowRight" ? 1 : -1);
      if (i >= count && d + 1 < this.tokenNodes.length) { d += 1; i = 0; }
      if (i < 0 && d > 0) { d -= 1; i = this.tokenNodes[d].length - 1; }
      i = Math.max(0, Math.min(i, this.tokenNodes[d].length - 1));
      if (event.shiftKey) { this.remember(); this.applyRange(d, i, i, "add"); this.changed(); }
      this.moveCursor(d, i);
      this.tokenNodes[d][i].scrollIntoView({ block: "nearest" });
    } else if (event.key === " ") {
      event.preventDefault();
      this.remember();
      const docid = this.assignment.item.documents[doc].docid;
      const on = this.sets[this.current].get(docid)?.has(token);
      this.applyRange(doc, token, token, on ? "remove" : "add");
      this.changed();
    } else if (event.key === "n") {
      this.nextSet();
    } else if (/^[1-9]$/.test(event.key) && Number(event.key) <= this.sets.length) {
      this.current = Number(event.key) - 1;
      this.renderLegend();
    } else if (event.key === "z" || (event.key === "Z" && event.ctrlKey)) {
      this.undo();
    } else if (event.key === "Enter") {
      event.preventDefault();
      this.submit();
    }
  }

  nextSet() {
    if (this.sets[this.sets.length - 1].size > 0) {
      this.remember();
      this.sets.push(new Map());
    }
    this.current = this.sets.length - 1;
    this.changed();
  }

  undo() {
    const previous = this.undoStack.pop();
    if (!previous) return;
    this.restore({ sets: JSON.parse(previous), current: this.current, client_uuid: this.clientUuid, elapsed_ms: this.timeSpent() });
    this.refreshAll();
    this.changed();
  }

  /** @param {boolean} all */
  clearSet(all) {
    this.remember();
    if (all) { this.sets = [new Map()]; this.current = 0; } else { this.sets[this.current] = new Map(); }
    this.refreshAll();
    this.changed();
  }

  // ------------------------------------------------------------ submitting

  spans() {
    return this.sets.map((set) => {
      /** @type {{docid: string, start_token: number, end_token: number}[]} */ const spans = [];
      for (const [docid, tokens] of set.entries()) {
        const sorted = [...tokens].sort((a, b) => a - b);
        for (const t of sorted) {
          const last = spans[spans.length - 1];
          if (last && last.docid === docid && last.end_token === t) last.end_token = t + 1;
          else spans.push({ docid, start_token: t, end_token: t + 1 });
        }
      }
      return spans;
    }).filter((spans) => spans.length > 0);
  }

  async submit() {
    if (!this.assignment || this.submitting) return;
    const sets = this.spans();
    const total = sets.flat().reduce((n, s) => n + s.end_token - s.start_token, 0);
    if (total < this.assignment.project.min_highlight) {
      this.showMessage(`Highlight at least ${this.assignment.project.min_highlight} word(s) before submitting.`, "error");
      return;
    }
    this.submitting = true;
    window.clearTimeout(this.saveTimer);
    const response = this.testMode
      ? await api(`/api/projects/${this.projectId}/qualification/answers/`, "POST", {
        gold_item: this.assignment.id, rationale_sets: sets, time_spent_ms: this.timeSpent(),
      })
      : await api(`/api/assignments/${this.assignment.id}/submit/`, "POST", {
        client_uuid: this.clientUuid, rationale_sets: sets, time_spent_ms: this.timeSpent(),
      });
    this.submitting = false;
    if (!response.ok) {
      this.showMessage(response.data && response.data.detail ? response.data.detail : `Submit failed (${response.status}).`, "error");
      return;
    }
    try { localStorage.removeItem(this.localKey()); } catch (_) { /* ignore */ }
    this.root.dataset.lastSubmitted = String(this.assignment.id);
    this.showMessage(response.data.late ? "Submitted (your lease had expired, but your work was kept)." : "Submitted. Loading the next item…", "ok");
    if (this.assignmentId) {
      window.location.href = `/projects/${this.assignment.project.id}/annotate/`;
      return;
    }
    await this.start();
  }

  async skip() {
    if (!this.assignment) return;
    await api(`/api/assignments/${this.assignment.id}/skip/`, "POST");
    try { localStorage.removeItem(this.localKey()); } catch (_) { /* ignore */ }
    await this.start();
  }

  /** @param {any} data */
  renderDone(data) {
    const body = /** @type {HTMLElement} */ (this.root.querySelector(".workspace-body"));
    body.replaceChildren(el("p", "done", data.detail || "No more items."));
    this.assignment = null;
    this.root.dataset.ready = "true";
    this.root.dataset.done = "true";
  }

  /** @param {string} text @param {string} kind */
  showMessage(text, kind) {
    const box = /** @type {HTMLElement} */ (this.root.querySelector(".message"));
    box.textContent = text;
    box.className = `message ${kind}`;
  }
}

const root = document.getElementById("workspace");
if (root) {
  const workspace = new Workspace(root);
  // Exposed for the browser tests and the latency benchmark.
  /** @type {any} */ (window).rationaleWorkspace = workspace;
  workspace.start();
}
