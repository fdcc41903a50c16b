// @ts-check
// Annotator workspace: select tokens into rationale sets, autosave drafts, submit once.
// The project's task type lays the item out: one text, a pair side by side, a question
// above its passage with the gold answer marked, or a question with its options.
// Every string from the server is inserted with textContent: imported text is data.
// The page's own strings go through Django's JavaScript catalog (gettext, ngettext, interpolate).

/** @typedef {{docid: string, role?: string, text: string, tokens: number[][], sentences: number[][]}} Doc */
/** @typedef {{docid: string, start_char: number, end_char: number, text: string}} AnswerSpan */
/** @typedef {AnswerSpan|{none: true}|null} Answer */
/** @typedef {{annotation_id: string|number, query: string|null, label: string|null, documents: Doc[],
 *   answer?: Answer, options?: string[], suggestions?: [string, number][]}} Item */
/** @typedef {{id: number, name: string, labels: string[], min_highlight: number, task_type?: string,
 *   language?: string, text_names?: string[], labels_from_annotators?: boolean,
 *   question_rationales?: boolean, no_answer_label?: string}} Project */
/** A blinded annotator's variant has no name, version or granularity: only what to follow.
 * @typedef {{id: number, status: string, round: number, draft: any, item: Item,
 *   variant: {name?: string, version?: number, text: string, examples: any[]}, project: Project}} Assignment */
/** A document as shown: questions first, and whether its tokens can be highlighted. */
/** @typedef {{doc: Doc, selectable: boolean}} Shown */
/** @typedef {import("./rationale_sets.js").SetEntries} SetEntries */
/** @typedef {import("./rationale_sets.js").TokenSpan} TokenSpan */
/** @typedef {import("./token_selection.js").TokenPosition} TokenPosition */
/** @typedef {import("./token_selection.js").TokenRun} TokenRun */
/** @typedef {import("./submit_retry.js").PendingSubmit} PendingSubmit */
/** @typedef {import("./workspace_draft.js").DraftRead} DraftRead */

import { api, el, errorText, fmt } from "./http.js";
import { RationaleSets, runStarts, tokensDiffering } from "./rationale_sets.js";
import { RunMarks } from "./run_marks.js";
import { rightToLeftRuns } from "./text_direction.js";
import { codeUnitsOf } from "./text_offsets.js";
import { pendingSubmitFromJson, submitToSend } from "./submit_retry.js";
import { Suggestions } from "./suggestions.js";
import { jumpFrom, stepFrom, TokenSelection } from "./token_selection.js";
import { UndoHistory } from "./undo_history.js";
import { draftOf, draftRead } from "./workspace_draft.js";

const COLOURS = 6;
/** How long a finger holds a token before it starts a run (a phone's text selection waits about as long). */
const LONG_PRESS_MS = 350;
/** How far a finger may drift during that wait before it counts as scrolling. */
const TOUCH_SLOP_PX = 10;
const TASK_NAMES = /** @type {Record<string, string>} */ ({
  classification: gettext("Single text"),
  sentence_pair: gettext("Text pair"),
  reading_comprehension: gettext("Reading comprehension"),
  multiple_choice: gettext("Multiple choice"),
});
/** The review properties by their API names. */
const PROPERTY_NAMES = /** @type {Record<string, string>} */ ({
  sufficiency: gettext("sufficiency"),
  compactness: gettext("compactness"),
  comprehensiveness: gettext("comprehensiveness"),
});

/** The annotator's counter: per variant where they may know it, else only their own items,
 * counted in the study they take part in or in the project.
 * @param {{submitted_by_you: number, variant_submitted?: number, variant_quota?: number, counted_in?: string}} progress */
function progressText(progress) {
  if (progress.variant_quota === undefined) {
    return interpolate(progress.counted_in === "study" ? gettext("Items done in this study: %(submitted_by_you)s")
      : gettext("Items done in this project: %(submitted_by_you)s"), progress, true);
  }
  return interpolate(gettext("Done by you: %(submitted_by_you)s · your variant: %(variant_submitted)s / %(variant_quota)s"), progress, true);
}

/** @param {Answer|undefined} answer @returns {answer is {none: true}} */
function isNoAnswer(answer) {
  return Boolean(answer && "none" in answer);
}

class Workspace {
  /** @param {HTMLElement} root */
  constructor(root) {
    this.root = root;
    this.projectId = root.dataset.projectId;
    this.assignmentId = root.dataset.assignmentId;
    /** @type {Assignment|null} */ this.assignment = null;
    /** @type {Shown[]} */ this.docs = [];
    this.rationale = new RationaleSets();
    /** The model's suggestions, under a variant that shows them. @type {Suggestions|null} */
    this.suggestions = null;
    /** The annotator's own label, when the project takes labels from them. @type {string|null} */
    this.label = null;
    this.selection = new TokenSelection();
    /** Earlier states of the sets, as their entries. @type {UndoHistory<SetEntries[]>} */
    this.history = new UndoHistory();
    /** @type {HTMLElement[][]} */ this.tokenNodes = [];
    /** The runs' numbers and the minimap's ticks. @type {RunMarks|null} */ this.runMarks = null;
    this.clientUuid = "";
    this.elapsedMs = 0;
    this.visibleSince = performance.now();
    this.saveTimer = 0;
    /** A change the server has not been sent yet (flushed when the annotator leaves). */
    this.draftUnsaved = false;
    /** The current set's tokens in the dragged document when the drag began.
     * @type {Set<number>} */
    this.dragBase = new Set();
    /** A finger down on a token, not yet a tap nor a long press.
     * @type {{at: TokenPosition, x: number, y: number, timer: number}|null} */
    this.touch = null;
    this.submitting = false;
    /** The submit that got no answer (or a refusal), frozen for its retry (submit_retry.js).
     * @type {PendingSubmit|null} */
    this.pendingSubmit = null;
    /** @type {HTMLButtonElement|null} */ this.submitButton = null;
    this.testMode = false;
    /** While a notice stands in place of the item, the keys do nothing. */
    this.paused = false;
    document.addEventListener("visibilitychange", () => {
      this.trackVisibility();
      if (document.visibilityState === "hidden") this.flushDraft();
    });
    window.addEventListener("pagehide", () => this.flushDraft());
    document.addEventListener("keydown", (e) => this.onKey(e));
    // Pointer events: a mouse, a pen and a finger select alike (a finger after a long press).
    document.addEventListener("pointermove", (e) => this.onPointerMove(e));
    document.addEventListener("pointerup", (e) => this.onPointerUp(e));
    document.addEventListener("pointercancel", () => this.cancelTouch());
    // While a finger draws a run, the page must not scroll under it.
    document.addEventListener("touchmove", (e) => { if (this.selection.drag) e.preventDefault(); }, { passive: false });
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
    if ((response.status === 403 || response.status === 409) && response.data && response.data.code) {
      this.renderRefusal(response.data);
      return;
    }
    if (!response.ok) {
      this.showMessage(response.data && response.data.detail ? response.data.detail
        : interpolate(gettext("Error %(status)s"), { status: response.status }, true), "error");
      this.root.querySelector(".workspace-body")?.replaceChildren();
      return;
    }
    if (!response.data.id) {
      this.renderDone(response.data);
      return;
    }
    this.load(response.data);
    if (this.testMode) {
      const test = response.data.test;
      if (test.previous_failed && test.position === 1 && !this.attemptNoticeSeen(test.attempt)) {
        this.renderAttemptNotice(test);
      } else this.renderTestBanner(test);
    } else {
      this.loadProgress();
      if (response.data.round > 1) this.loadFeedback(response.data.id);
    }
  }

  /** Why this worker is not served work, in plain words. @param {any} data */
  renderRefusal(data) {
    const body = /** @type {HTMLElement} */ (this.root.querySelector(".workspace-body"));
    const box = el("div", undefined, `refusal refusal-${data.code}`);
    box.appendChild(el("h2", {
      pending_selection: gettext("Waiting for a decision"),
      not_qualified: gettext("Not qualified for this project"),
      blocked: gettext("Blocked on this project"),
      consent_required: gettext("Your consent is needed first"),
      consent_declined: gettext("You declined to take part"),
      project_archived: gettext("This project is archived"),
      no_active_variant: gettext("Not ready for annotating yet"),
    }[/** @type {string} */ (data.code)] || gettext("Not available")));
    box.appendChild(el("p", {
      project_archived: gettext("This project is archived: it takes no more annotations. Your other projects are on the home page."),
      no_active_variant: gettext("This project has no active instruction variant yet, so there is nothing to annotate. An admin activates one on the project's Instructions page."),
    }[/** @type {string} */ (data.code)] || data.detail));
    if (data.code === "project_archived" || data.code === "no_active_variant") box.appendChild(this.homeLink());
    if (data.reason) box.appendChild(el("p", interpolate(gettext("Why: %(reason)s"), { reason: data.reason }, true), "muted"));
    body.replaceChildren(box);
    this.assignment = null;
    this.root.dataset.ready = "true";
    this.root.dataset.refused = data.code;
  }

  /** @param {number} attempt */
  attemptNoticeKey(attempt) { return `rw-attempt-notice-${this.projectId}-${attempt}`; }

  /** @param {number} attempt */
  attemptNoticeSeen(attempt) {
    try { return sessionStorage.getItem(this.attemptNoticeKey(attempt)) === "1"; } catch (_) { return false; }
  }

  /** Before another attempt begins: the last one failed, with its score and the mark, and
   * how many attempts remain. The test item appears when the worker chooses to begin.
   * @param {{attempt: number, max_attempts: number, position: number, total: number,
   *   previous_failed: {number: number, mean_f1: number, pass_mark: number, attempts_left: number}}} test */
  renderAttemptNotice(test) {
    const failed = test.previous_failed;
    const body = /** @type {HTMLElement} */ (this.root.querySelector(".workspace-body"));
    const box = el("section", undefined, "attempt-notice");
    box.setAttribute("role", "alert");
    box.appendChild(el("h2", failed.number === 1 ? gettext("You did not pass the first attempt")
      : interpolate(gettext("You did not pass attempt %(number)s"), failed, true)));
    box.appendChild(el("p", interpolate(gettext("Your highlights matched the gold with a mean token F1 of %(f1)s; the pass mark is %(mark)s."),
      { f1: fmt(failed.mean_f1), mark: fmt(failed.pass_mark) }, true)));
    box.appendChild(el("p", failed.attempts_left === 1 ? gettext("You have one more attempt. It is your last: read the instructions again before you begin.")
      : interpolate(gettext("You have %(left)s more attempts."), { left: failed.attempts_left }, true), "attempts-left"));
    const begin = el("button", interpolate(gettext("Begin attempt %(attempt)s"), test, true), "primary begin-attempt");
    begin.type = "button";
    begin.addEventListener("click", () => {
      try { sessionStorage.setItem(this.attemptNoticeKey(test.attempt), "1"); } catch (_) { /* kept for this page */ }
      this.paused = false;
      this.render();
      this.renderTestBanner(test);
      this.root.dataset.attemptNotice = "done";
    });
    box.appendChild(begin);
    body.replaceChildren(box);
    this.showMessage("", "muted");
    this.paused = true;
    this.root.dataset.attemptNotice = "shown";
    begin.focus();
  }

  /** @param {{attempt: number, max_attempts: number, position: number, total: number}} test */
  renderTestBanner(test) {
    const banner = el("div", interpolate(gettext("Qualification test: item %(position)s of %(total)s (attempt %(attempt)s of %(max_attempts)s). Your answers are scored when the test is complete."), test, true), "test-banner");
    const body = /** @type {HTMLElement} */ (this.root.querySelector(".workspace-body"));
    body.prepend(banner);
    this.root.querySelector(".progress")?.remove();
    this.root.dataset.mode = "test";
  }

  /** The reviewers' verdict on the previous round, shown above a revision. @param {number} id */
  async loadFeedback(id) {
    const response = await api(`/api/assignments/${id}/feedback/`, "GET");
    if (!response.ok) {
      this.showMessage(interpolate(gettext("The reviewers' feedback could not be loaded: %(error)s"), { error: errorText(response.data) }, true), "error");
      return;
    }
    if (!response.data.revision) return;
    const f = response.data;
    const box = el("section", undefined, "feedback");
    box.appendChild(el("h2", interpolate(gettext("Revision: round %(round)s of %(max_rounds)s"), f, true)));
    const failed = (f.verdict && f.verdict.failed) || [];
    box.appendChild(el("p", failed.length
      ? interpolate(gettext("The reviewers found these below the bar: %(properties)s."), {
        properties: failed.map((/** @type {string} */ p) => interpolate(gettext("%(property)s (mean %(mean)s, needs %(needed)s)"), {
          property: PROPERTY_NAMES[p] || p, mean: fmt(f.verdict.means[p]), needed: fmt(f.thresholds[p]),
        }, true)).join(gettext("; ")),
      }, true)
      : gettext("Please revise your highlights.")));
    box.appendChild(el("p", gettext("Your previous highlights are loaded below; change them and submit again."), "muted"));
    const table = el("table", undefined, "grid feedback-scores");
    const head = el("tr");
    [gettext("Reviewer"), gettext("Set"), gettext("Sufficiency (1–3)"), gettext("Compactness (1–4)"),
      gettext("Comprehensiveness (1–3)"), gettext("Comment")].forEach((h) => head.appendChild(el("th", h)));
    table.appendChild(head);
    for (const review of f.reviews) {
      const sets = review.sets.length ? review.sets : [{ position: null, sufficiency: null, compactness: null, comment: "" }];
      sets.forEach((/** @type {any} */ set, /** @type {number} */ n) => {
        const row = el("tr");
        [review.reviewer, set.position === null ? "" : interpolate(gettext("Set %(set)s"), { set: set.position + 1 }, true),
          fmt(set.sufficiency), fmt(set.compactness),
          n === 0 ? fmt(review.comprehensiveness) : "", [set.comment, n === 0 ? review.comment : ""].filter(Boolean).join(" · ")]
          .forEach((text) => row.appendChild(el("td", text)));
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
    if (!box) return;
    box.textContent = response.ok ? progressText(response.data) : errorText(response.data);
  }

  /** @param {Assignment} assignment */
  load(assignment) {
    this.assignment = assignment;
    this.rationale = new RationaleSets();
    this.label = null;
    this.history = new UndoHistory();
    const project = assignment.project;
    // A reading-comprehension question takes rationales only where the project allows it.
    const questionsSelectable = project.task_type !== "reading_comprehension" || Boolean(project.question_rationales);
    const documents = assignment.item.documents;
    this.suggestions = assignment.item.suggestions ? new Suggestions(assignment.item.suggestions) : null;
    this.docs = [
      ...documents.filter((doc) => doc.role === "question").map((doc) => ({ doc, selectable: questionsSelectable })),
      ...documents.filter((doc) => doc.role !== "question").map((doc) => ({ doc, selectable: true })),
    ];
    const first = this.docs.findIndex((shown) => shown.selectable && shown.doc.tokens.length > 0);
    this.selection.moveCursor({ doc: Math.max(first, 0), token: 0 });
    this.elapsedMs = 0;
    this.visibleSince = performance.now();
    this.clientUuid = crypto.randomUUID();
    const draft = draftRead(assignment.draft || this.localDraft());
    if (draft) this.restore(draft);
    this.pendingSubmit = this.storedSubmit();
    // A reload after a dropped submit sends that submit's own UUID (and body) again.
    if (this.pendingSubmit) this.clientUuid = this.pendingSubmit.body.client_uuid;
    this.render();
    this.root.dataset.assignment = String(assignment.id);
  }

  localKey() { return `rw-draft-${this.testMode ? "test-" : ""}${this.assignment ? this.assignment.id : "none"}`; }

  submitKey() { return `rw-submit-${this.assignment ? this.assignment.id : "none"}`; }

  /** A submit left unanswered before a reload, from this tab's sessionStorage. */
  storedSubmit() {
    if (this.testMode) return null;
    try { return pendingSubmitFromJson(sessionStorage.getItem(this.submitKey())); } catch (_) { return null; }
  }

  localDraft() {
    try { return JSON.parse(localStorage.getItem(this.localKey()) || "null"); } catch (_) { return null; }
  }

  /** @param {DraftRead} draft */
  restore(draft) {
    this.rationale = RationaleSets.fromEntries(draft.sets, draft.current);
    this.label = draft.label ?? this.label;
    this.clientUuid = draft.clientUuid ?? this.clientUuid;
    this.elapsedMs = draft.elapsedMs ?? this.elapsedMs;
    // Suggestions accepted before leaving stay accepted (the submit claims them).
    for (const [docid, token] of draft.accepted ?? []) this.suggestions?.accept(docid, token);
  }

  serialize() {
    const accepted = this.suggestions
      ? /** @type {[string, number][]} */ ([...this.suggestions.tokens].filter((t) => this.suggestions?.isAccepted(t.docid, t.token)).map((t) => [t.docid, t.token]))
      : undefined;
    return draftOf({ rationale: this.rationale, label: this.label, clientUuid: this.clientUuid, elapsedMs: this.timeSpent(), accepted });
  }

  /** Whether the annotator gives the label (or answer) here instead of seeing the gold. */
  picksLabel() {
    return Boolean(this.assignment && this.assignment.project.labels_from_annotators && !this.testMode);
  }

  taskType() {
    return (this.assignment && this.assignment.project.task_type) || "classification";
  }

  // ------------------------------------------------------------ rendering

  render() {
    const a = /** @type {Assignment} */ (this.assignment);
    const body = /** @type {HTMLElement} */ (this.root.querySelector(".workspace-body"));
    body.replaceChildren();
    this.root.dataset.task = this.taskType();

    const toolbar = el("section", undefined, "ws-toolbar");
    toolbar.setAttribute("aria-label", gettext("Annotation controls"));
    const instructions = el("details", undefined, "instructions");
    instructions.open = !this.instructionsClosed();
    instructions.addEventListener("toggle", () => this.rememberInstructions(instructions.open));
    instructions.appendChild(el("summary", a.variant.name === undefined ? gettext("Instructions")
      : interpolate(gettext("Instructions (%(name)s, version %(version)s)"), a.variant, true)));
    const guide = el("div", undefined, "instruction-body");
    guide.appendChild(el("p", a.variant.text, "instruction-text"));
    // Chinese examples are written without spaces between their (one-character) tokens.
    const gap = a.project.language === "zh" ? "" : " ";
    for (const example of a.variant.examples || []) {
      const box = el("div", undefined, "example");
      box.appendChild(el("span", gettext("Example: "), "muted"));
      const marked = new Set(example.highlighted);
      example.tokens.forEach((/** @type {string} */ token, /** @type {number} */ i) => {
        box.appendChild(el("span", token, marked.has(i) ? "tok example-on" : "tok"));
        if (gap) box.appendChild(document.createTextNode(gap));
      });
      if (example.label) box.appendChild(el("span", ` → ${example.label}`, "muted"));
      if (example.note) box.appendChild(el("p", example.note, "muted"));
      guide.appendChild(box);
    }
    instructions.appendChild(guide);
    toolbar.appendChild(instructions);
    body.appendChild(toolbar);

    const bar = el("div", undefined, "item-bar");
    bar.appendChild(el("span", TASK_NAMES[this.taskType()] || gettext("Task"), "chip task-chip"));
    bar.appendChild(el("span", interpolate(gettext("Item %(id)s"), { id: a.item.annotation_id }, true), "item-id"));
    bar.appendChild(el("span", gettext("Progress: …"), "progress"));
    body.appendChild(bar);

    const layout = el("div", undefined, "ws-layout");
    const main = el("div", undefined, "ws-main");
    const side = el("aside", undefined, "ws-side");
    side.setAttribute("aria-label", gettext("Label, rationale sets and submit"));
    // Where the highlights are in the whole item, beside the texts; the keys ] and [ (in the
    // shortcuts) reach the same places for those who do not point.
    const minimap = el("div", undefined, "minimap");
    minimap.setAttribute("aria-hidden", "true");
    minimap.title = gettext("Where the highlights are: click to go there");
    layout.classList.add("with-minimap");
    layout.append(main, minimap, side);
    body.appendChild(layout);

    this.tokenNodes = this.docs.map(() => []);
    this.runMarks = new RunMarks(main, minimap, (at) => this.jumpTo(at));
    this.renderItem(main);
    this.renderToolbar(toolbar);
    if (this.suggestions) this.renderSuggestionBar(toolbar);
    this.renderSide(side);
    this.refreshAll();
    this.followToolbarHeight(toolbar);
    this.holdBlockSizes(main);
    this.root.dataset.ready = "true";
    performance.mark("workspace-ready");
  }

  /** The question, the texts and the options, in the main column. @param {HTMLElement} main */
  renderItem(main) {
    const a = /** @type {Assignment} */ (this.assignment);
    const task = this.taskType();
    const showGold = !this.picksLabel();
    const options = a.item.options || [];
    const questions = this.docs.filter((shown) => shown.doc.role === "question");
    const texts = this.docs.filter((shown) => shown.doc.role !== "question");

    for (const shown of questions) {
      const panel = this.panel(gettext("Question"), "question-panel");
      if (!shown.selectable) panel.head.appendChild(el("span", gettext("not for highlighting in this project"), "panel-note"));
      panel.box.appendChild(this.renderDocument(shown, this.docs.indexOf(shown)));
      main.appendChild(panel.box);
    }
    if (!questions.length && a.item.query && !(task === "multiple_choice" && options.length)) {
      main.appendChild(this.queryPanel(a.item.query));
    }

    const answer = showGold ? a.item.answer || null : null;
    const names = this.textNames(texts.length);
    const group = el("div", undefined, `documents${task === "sentence_pair" ? " pair" : ""}`);
    texts.forEach((shown, n) => {
      const panel = this.panel(names[n], "doc-panel");
      panel.box.setAttribute("aria-label", names[n]);
      if (isNoAnswer(answer) && n === 0) {
        panel.head.appendChild(el("span", gettext("∅ No answer in this passage"), "badge no-answer-badge"));
      }
      const count = el("span", undefined, "doc-count");
      count.dataset.docid = shown.doc.docid;
      panel.head.appendChild(count);
      panel.box.appendChild(this.renderDocument(shown, this.docs.indexOf(shown), answer));
      group.appendChild(panel.box);
    });
    main.appendChild(group);

    if (task === "multiple_choice" && options.length) {
      main.appendChild(this.renderOptions(options, showGold ? a.item.label : null));
    }
  }

  /** @param {string} title @param {string} cls */
  panel(title, cls) {
    const box = el("section", undefined, `panel ${cls}`);
    const head = el("header", undefined, "panel-head");
    head.appendChild(el("h2", title, "panel-title"));
    box.appendChild(head);
    return { box, head };
  }

  /** What the texts are called: a pair's by the project, else by what they are. @param {number} count */
  textNames(count) {
    const task = this.taskType();
    const given = (this.assignment && this.assignment.project.text_names) || [];
    return Array.from({ length: count }, (_, n) => {
      const number = { n: n + 1 };
      if (task === "sentence_pair") return given[n] || interpolate(gettext("Text %(n)s"), number, true);
      if (task === "reading_comprehension") {
        return count > 1 ? interpolate(gettext("Passage %(n)s"), number, true) : gettext("Passage");
      }
      if (task === "multiple_choice") return gettext("Question");
      return count > 1 ? interpolate(gettext("Text %(n)s"), number, true) : gettext("Text");
    });
  }

  /** An ERASER query shown as the question; MultiRC's "question || answer" in its two parts.
   * @param {string} query */
  queryPanel(query) {
    const panel = this.panel(gettext("Question"), "question-panel query");
    const cut = this.taskType() === "reading_comprehension" ? query.indexOf(" || ") : -1;
    panel.box.appendChild(el("p", cut < 0 ? query : query.slice(0, cut), "query-text"));
    if (cut >= 0) {
      const line = el("p", undefined, "candidate");
      line.append(el("span", gettext("Candidate answer: "), "muted"), el("strong", query.slice(cut + 4)));
      panel.box.appendChild(line);
    }
    return panel.box;
  }

  /** The options with the gold one marked, or as the required choice. @param {string[]} options @param {string|null} gold */
  renderOptions(options, gold) {
    const picking = this.picksLabel();
    const panel = this.panel(picking ? gettext("Options: choose the right one") : gettext("Options"), "options-panel");
    const list = el(picking ? "div" : "ol", undefined, "options");
    if (picking) {
      list.setAttribute("role", "radiogroup");
      list.setAttribute("aria-label", gettext("Options"));
      list.setAttribute("aria-required", "true");
    }
    options.forEach((option, n) => {
      const correct = !picking && option === gold;
      const row = el(picking ? "label" : "li", undefined, `option${correct ? " gold" : ""}`);
      if (picking) {
        const input = /** @type {HTMLInputElement} */ (el("input"));
        input.type = "radio";
        input.name = "option";
        input.value = option;
        input.checked = this.label === option;
        input.addEventListener("change", () => this.pick(option));
        row.appendChild(input);
      }
      const key = el("span", String.fromCharCode(65 + (n % 26)), "key");
      key.setAttribute("aria-hidden", "true");
      row.appendChild(key);
      row.appendChild(el("span", option, "option-text"));
      if (correct) {
        row.appendChild(el("span", gettext("✓ Correct"), "correct-tag"));
        row.setAttribute("aria-label", interpolate(gettext("%(option)s (the correct answer)"), { option }, true));
      }
      list.appendChild(row);
    });
    panel.box.appendChild(list);
    return panel.box;
  }

  /** The sticky toolbar: the rationale sets, the label or answer the annotator gives (or
   * the gold label), Clear all, Skip, the shortcuts and Submit. @param {HTMLElement} toolbar */
  renderToolbar(toolbar) {
    const a = /** @type {Assignment} */ (this.assignment);
    const task = this.taskType();
    const hasOptions = task === "multiple_choice" && (a.item.options || []).length > 0;
    const row = el("div", undefined, "ws-toolbar-row");

    const setsGroup = el("div", undefined, "group sets-group");
    setsGroup.appendChild(el("span", gettext("Sets"), "group-label"));
    const legend = el("div", undefined, "legend");
    legend.setAttribute("role", "group");
    legend.setAttribute("aria-label", gettext("Rationale sets"));
    // "New set" first: a chip added or grown on its right never moves it under the pointer.
    setsGroup.appendChild(this.button(gettext("+ New set (n)"), "secondary new-set", () => this.nextSet()));
    setsGroup.appendChild(legend);
    row.appendChild(setsGroup);

    if (this.picksLabel()) {
      const labelGroup = el("div", undefined, "group label-group");
      if (hasOptions) {
        labelGroup.appendChild(el("span", gettext("Option"), "group-label"));
        labelGroup.appendChild(el("span", undefined, "chosen-option"));
      } else {
        const typed = task === "reading_comprehension" && !a.project.labels.length;
        labelGroup.appendChild(el("span", typed ? gettext("Your answer") : this.labelWord(), "group-label"));
        labelGroup.appendChild(this.renderPicker(typed));
      }
      row.appendChild(labelGroup);
    }

    const actions = el("div", undefined, "toolbar-actions actions");
    actions.appendChild(this.button(gettext("Clear all"), "clear-all", () => this.clearAllAsked()));
    if (!this.testMode) actions.appendChild(this.button(gettext("Skip item"), "secondary skip", () => this.skip()));
    const help = this.button("?", "help-button", () => this.openShortcuts());
    help.setAttribute("aria-label", gettext("Keyboard shortcuts (?)"));
    help.title = gettext("Keyboard shortcuts (?)");
    help.setAttribute("aria-haspopup", "dialog");
    actions.appendChild(help);
    const submit = this.button(gettext("Submit (Enter)"), "primary submit", () => this.submit());
    this.submitButton = submit;
    actions.appendChild(submit);
    row.appendChild(actions);
    toolbar.appendChild(row);
    this.renderChosen();
  }

  /** The suggestions' legend and actions, only under a variant that shows them: a token
   * the model suggests has a dotted frame and a ✦ mark; one accepted, a ✓ mark.
   * @param {HTMLElement} toolbar */
  renderSuggestionBar(toolbar) {
    const row = el("div", undefined, "ws-toolbar-row suggestion-bar");
    row.setAttribute("role", "group");
    row.setAttribute("aria-label", gettext("Model suggestions"));
    row.appendChild(el("span", gettext("Model suggestions"), "group-label"));
    const legend = el("span", undefined, "suggestion-legend");
    const sample = el("span", gettext("word"), "tok suggested suggestion-sample");
    sample.setAttribute("aria-hidden", "true");
    legend.append(sample, el("span", gettext("suggested by a model: click it or press a to accept"), "muted"));
    row.appendChild(legend);
    row.appendChild(el("span", undefined, "suggestion-count"));
    row.appendChild(this.button(gettext("Accept all (A)"), "secondary accept-all", () => this.acceptAllSuggestions()));
    const hide = this.button(gettext("Ignore suggestions"), "secondary ignore-suggestions", () => this.toggleSuggestions());
    hide.setAttribute("aria-pressed", "false");
    row.appendChild(hide);
    toolbar.appendChild(row);
  }

  /** Hides or shows the suggestions; what was accepted stays in the sets. */
  toggleSuggestions() {
    const s = /** @type {Suggestions} */ (this.suggestions);
    s.hidden = !s.hidden;
    const button = /** @type {HTMLElement} */ (this.root.querySelector(".ignore-suggestions"));
    button.textContent = s.hidden ? gettext("Show suggestions") : gettext("Ignore suggestions");
    button.setAttribute("aria-pressed", String(s.hidden));
    this.refreshAll();
  }

  /** Every suggestion into the current set, accepted. */
  acceptAllSuggestions() {
    if (!this.suggestions || this.suggestions.hidden) return;
    this.remember();
    for (const { docid, token } of this.suggestions.acceptAll()) {
      if (!this.rationale.has(docid, token)) this.rationale.toggle(docid, token);
    }
    this.refreshAll();
    this.changed();
  }

  /** The suggestion at the cursor into the current set, accepted. */
  acceptAtCursor() {
    const { doc, token } = this.selection.cursor;
    const shown = this.docs[doc];
    if (!this.suggestions || this.suggestions.hidden || !shown) return;
    const docid = shown.doc.docid;
    if (!this.suggestions.accept(docid, token)) return;
    this.remember();
    if (!this.rationale.has(docid, token)) this.rationale.toggle(docid, token);
    this.paintRun({ doc, from: token, to: token });
    this.changed();
  }

  /** The accepted suggestions still highlighted, for the submit; undefined without any shown. */
  acceptedSuggestions() {
    if (!this.suggestions) return undefined;
    return this.suggestions.acceptedIn((docid, token) => this.rationale.marksOf(docid, token).count > 0);
  }

  /** What the task calls the label: a pair's relation, a question's answer, else label. */
  labelWord() {
    const task = this.taskType();
    if (task === "multiple_choice") return gettext("Option");
    if (task === "reading_comprehension") return gettext("Answer");
    return gettext("Label");
  }

  /** @param {string} text @param {string} cls @param {() => void} action */
  button(text, cls, action) {
    const button = el("button", text, cls);
    button.type = "button";
    button.addEventListener("click", action);
    return button;
  }

  /** The multiple-choice option picked below, repeated in the toolbar. */
  renderChosen() {
    const chosen = this.root.querySelector(".chosen-option");
    if (!chosen) return;
    const options = (this.assignment && this.assignment.item.options) || [];
    const n = this.label === null ? -1 : options.indexOf(this.label);
    chosen.textContent = n < 0 ? gettext("choose one below")
      : `${String.fromCharCode(65 + (n % 26))}. ${options[n]}`;
  }

  /** The side column: the gold label or answer, and the set tools. @param {HTMLElement} side */
  renderSide(side) {
    const a = /** @type {Assignment} */ (this.assignment);
    const task = this.taskType();
    const hasOptions = task === "multiple_choice" && (a.item.options || []).length > 0;
    const card = el("section", undefined, "panel side-card answer-card");
    if (this.picksLabel()) {
      // The label or answer is given in the toolbar.
    } else if (task === "reading_comprehension") {
      card.appendChild(el("h2", gettext("Gold answer"), "side-title"));
      const answer = a.item.answer;
      if (isNoAnswer(answer)) card.appendChild(el("p", gettext("No answer: the passage does not hold one."), "gold-answer-text none"));
      else if (answer) card.appendChild(el("p", answer.text, "gold-answer-text"));
      else card.appendChild(el("p", gettext("No answer span was given for this item."), "muted"));
      if (a.item.label) {
        const line = el("p", undefined, "gold-line");
        line.append(el("span", gettext("Label "), "muted"), el("span", a.item.label, "gold-label"));
        card.appendChild(line);
      }
      side.appendChild(card);
    } else if (!hasOptions) {
      card.appendChild(el("h2", gettext("Gold label"), "side-title"));
      card.appendChild(el("span", a.item.label ?? gettext("(none)"), "gold-label"));
      side.appendChild(card);
    }

    const sets = el("section", undefined, "panel side-card sets-card");
    sets.appendChild(el("h2", gettext("Rationale sets"), "side-title"));
    sets.appendChild(el("p", gettext("Each set has its number, colour and underline; a hatched word is in several sets."), "muted keys"));
    const controls = el("div", undefined, "controls");
    controls.appendChild(this.button(gettext("Undo (z)"), "secondary", () => this.undo()));
    controls.appendChild(this.button(gettext("Redo (y)"), "secondary", () => this.redo()));
    controls.appendChild(this.button(gettext("Clear set"), "secondary", () => this.clearSet(false)));
    sets.appendChild(controls);
    side.appendChild(sets);
    const keys = el("p", undefined, "muted keys");
    keys.appendChild(document.createTextNode(gettext("Mouse: click a word, drag across words, shift-click to extend. Press ")));
    keys.appendChild(el("kbd", "?"));
    keys.appendChild(document.createTextNode(gettext(" for every keyboard shortcut.")));
    side.appendChild(keys);
  }

  /** Lets the browser skip the texts' blocks that are off screen (content-visibility: auto,
   * workspace.css): a change then styles, lays out, paints and hit-tests the blocks near the
   * screen, not the whole text. Each block is held at the height it has when laid out, read
   * here for all blocks at once after the first layout, so a block coming into view (by
   * scrolling, a jump, a search) takes exactly the room it held and nothing moves. A new
   * width of the column wraps the lines otherwise: the heights are read again.
   * @param {HTMLElement} main */
  holdBlockSizes(main) {
    const texts = [...main.querySelectorAll(".document.marks-layered")];
    const measure = () => {
      for (const text of texts) text.classList.remove("blocks-skippable");
      const blocks = /** @type {HTMLElement[]} */ ([...main.querySelectorAll(".marks-layered .doc-block")]);
      // Every read before any write: the text is laid out once, not once per block.
      const heights = blocks.map((block) => block.getBoundingClientRect().height);
      blocks.forEach((block, n) => block.style.setProperty("contain-intrinsic-block-size", `auto ${heights[n]}px`));
      for (const text of texts) text.classList.add("blocks-skippable");
      return main.clientWidth;
    };
    let width = measure();
    if (typeof ResizeObserver === "undefined") return;
    let timer = 0;
    new ResizeObserver(() => {
      if (main.clientWidth === width) return;
      // Once the window has stopped changing, not at every step of a drag of its edge.
      window.clearTimeout(timer);
      timer = window.setTimeout(() => { width = measure(); this.runMarks?.placeAll(); }, 150);
    }).observe(main);
  }

  /** Keeps the side column's sticky offset below the toolbar, whatever its height.
   * @param {HTMLElement} toolbar */
  followToolbarHeight(toolbar) {
    const update = () => this.root.style.setProperty("--ws-toolbar-height", `${toolbar.offsetHeight}px`);
    update();
    if (typeof ResizeObserver !== "undefined") new ResizeObserver(update).observe(toolbar);
  }

  instructionsKey() { return `rw-instructions-closed-${this.projectId}`; }

  instructionsClosed() {
    try { return localStorage.getItem(this.instructionsKey()) === "1"; } catch (_) { return false; }
  }

  /** @param {boolean} open */
  rememberInstructions(open) {
    try { localStorage.setItem(this.instructionsKey(), open ? "0" : "1"); } catch (_) { /* private mode */ }
  }

  clearAllAsked() {
    const count = this.rationale.totalTokens();
    if (count === 0) return;
    const question = interpolate(ngettext("Remove %(count)s highlighted token from every set?",
      "Remove all %(count)s highlighted tokens from every set?", count), { count }, true);
    if (window.confirm(question)) this.clearSet(true);
  }

  /** The keyboard shortcuts in a modal dialog: focus stays inside, Esc or Close ends it. */
  openShortcuts() {
    let dialog = /** @type {HTMLDialogElement|null} */ (document.getElementById("shortcuts-dialog"));
    if (!dialog) {
      dialog = this.shortcutsDialog();
      document.body.appendChild(dialog);
    }
    if (dialog.open) return;
    const returnTo = document.activeElement;
    const shown = dialog;
    shown.addEventListener("close", () => {
      if (returnTo instanceof HTMLElement) returnTo.focus();
    }, { once: true });
    shown.showModal();
    /** @type {HTMLElement|null} */ (shown.querySelector(".close"))?.focus();
  }

  shortcutsDialog() {
    const dialog = /** @type {HTMLDialogElement} */ (el("dialog", undefined, "shortcuts-dialog"));
    dialog.id = "shortcuts-dialog";
    dialog.setAttribute("role", "dialog");
    dialog.setAttribute("aria-modal", "true");
    dialog.setAttribute("aria-labelledby", "shortcuts-title");
    const head = el("header");
    const title = el("h2", gettext("Keyboard shortcuts"));
    title.id = "shortcuts-title";
    const close = this.button(gettext("Close (Esc)"), "close", () => dialog.close());
    head.append(title, close);
    dialog.appendChild(head);
    const table = el("table");
    const rows = [
      [["←", "→"], gettext("Move to the previous or next word")],
      [["Space"], gettext("Highlight or clear the word under the cursor")],
      [["Shift", "←/→"], gettext("Extend the highlight word by word")],
      [["n"], gettext("Start a new rationale set")],
      ...(this.suggestions ? [
        [["a"], gettext("Accept the model's suggestion under the cursor")],
        [["A"], gettext("Accept every suggestion of the model")],
      ] : []),
      [["]", "["], gettext("Go to the next or previous highlight")],
      [["s"], gettext("Go to the next set's highlights (it becomes the current set)")],
      [["1", "…", "9"], gettext("Choose rationale set 1 to 9")],
      [["z"], gettext("Undo the last change")],
      [["y"], gettext("Redo what was undone")],
      [["Enter"], gettext("Submit")],
      [["p"], gettext("Your previous items: see or change what you submitted")],
      [["?"], gettext("Show these shortcuts")],
      [["Esc"], gettext("Close this dialog")],
    ];
    for (const [keys, what] of rows) {
      const row = el("tr");
      const keyCell = el("th");
      keyCell.setAttribute("scope", "row");
      /** @type {string[]} */ (keys).forEach((key, n) => {
        if (n) keyCell.appendChild(document.createTextNode(" "));
        keyCell.appendChild(el("kbd", key));
      });
      row.append(keyCell, el("td", /** @type {string} */ (what)));
      table.appendChild(row);
    }
    dialog.appendChild(table);
    dialog.appendChild(el("p", gettext("Mouse: click a word, drag across words, shift-click to extend a highlight."), "muted dialog-note"));
    // Tab and Shift+Tab go round the dialog's own controls.
    dialog.addEventListener("keydown", (event) => {
      if (event.key !== "Tab") return;
      const focusable = [...dialog.querySelectorAll("button, [href], input, select, textarea")];
      const first = /** @type {HTMLElement} */ (focusable[0]);
      const last = /** @type {HTMLElement} */ (focusable[focusable.length - 1]);
      if (event.shiftKey && document.activeElement === first) { event.preventDefault(); last.focus(); }
      else if (!event.shiftKey && document.activeElement === last) { event.preventDefault(); first.focus(); }
    });
    return dialog;
  }

  /** The required picker: the project's labels, or a typed answer and "no answer".
   * @param {boolean} typed */
  renderPicker(typed) {
    const a = /** @type {Assignment} */ (this.assignment);
    if (typed) {
      const noAnswer = a.project.no_answer_label || "(no answer)";
      const box = el("div", undefined, "answer-picker");
      const field = el("label", undefined, "field");
      field.appendChild(el("span", gettext("The answer, as the passage words it"), "field-label"));
      const input = /** @type {HTMLInputElement} */ (el("input"));
      input.type = "text";
      input.name = "answer";
      input.required = true;
      input.autocomplete = "off";
      field.appendChild(input);
      const none = el("label", undefined, "check");
      const check = /** @type {HTMLInputElement} */ (el("input"));
      check.type = "checkbox";
      check.name = "no_answer";
      none.append(check, el("span", gettext("No answer in the passage")));
      if (this.label === noAnswer) check.checked = true;
      else if (this.label) input.value = this.label;
      input.disabled = check.checked;
      const sync = () => {
        input.disabled = check.checked;
        this.pick(check.checked ? noAnswer : input.value.trim() || null);
      };
      input.addEventListener("input", sync);
      check.addEventListener("change", sync);
      box.append(field, none);
      return box;
    }
    const group = el("fieldset", undefined, "choices");
    group.appendChild(el("legend", gettext("Label (required)"), "sr-only"));
    for (const label of a.project.labels) {
      const choice = el("label", undefined, "choice");
      const input = /** @type {HTMLInputElement} */ (el("input"));
      input.type = "radio";
      input.name = "label";
      input.value = label;
      input.required = true;
      input.checked = this.label === label;
      input.addEventListener("change", () => this.pick(label));
      choice.append(input, el("span", label));
      group.appendChild(choice);
    }
    return group;
  }

  /** @param {string|null} label */
  pick(label) {
    this.label = label;
    this.renderChosen();
    this.changed();
  }

  /** A document's text as it was imported, its tokens as spans; the gold answer, if it
   * lies here, wrapped in a mark. @param {Shown} shown @param {number} d @param {Answer} [answer] */
  renderDocument(shown, d, answer) {
    const doc = shown.doc;
    const box = el("div", undefined, `document${shown.selectable ? " marks-layered" : " readonly-doc"}`);
    box.dataset.docid = doc.docid;
    box.lang = (this.assignment && this.assignment.project.language) || "en";
    const units = codeUnitsOf(doc.text);
    const tokens = doc.tokens.map(([start, end]) => [units(start), units(end)]);
    const given = answer && "docid" in answer && answer.docid === doc.docid ? answer : null;
    const span = given && { ...given, start_char: units(given.start_char), end_char: units(given.end_char) };
    const fragment = document.createDocumentFragment();
    // A selectable text is cut into blocks at its line breaks (it reads the same: the text
    // is pre-wrapped): a change lays out and paints the lines of its own paragraph, not of
    // the whole text.
    /** @type {HTMLElement|DocumentFragment} */ let block = fragment;
    const newBlock = () => {
      block = el("div", undefined, "doc-block");
      fragment.appendChild(block);
    };
    if (shown.selectable) newBlock();
    /** @type {HTMLElement|null} */ let mark = null;
    /** Where what starts at character `at` goes: the answer's mark, or the document. @param {number} at */
    const target = (at) => {
      if (!span || at < span.start_char || at >= span.end_char) return block;
      if (!mark) {
        mark = el("mark", undefined, "gold-answer");
        mark.title = gettext("Gold answer");
        mark.appendChild(el("span", gettext("Gold answer: "), "sr-only"));
        const tag = el("span", gettext("Answer"), "answer-tag");
        tag.setAttribute("aria-hidden", "true");
        mark.appendChild(tag);
        block.appendChild(mark);
      }
      return mark;
    };
    const rightToLeft = rightToLeftRuns(doc.text, tokens);
    /** The right-to-left run being filled, if any. @type {HTMLElement|null} */ let run = null;
    /** @param {Node} node @param {number} at @param {boolean} inRun */
    const place = (node, at, inRun) => {
      const parent = target(at);
      if (!inRun) {
        run = null;
        parent.appendChild(node);
        return;
      }
      if (!run || run.parentNode !== parent) {
        run = el("span", undefined, "rtl-run");
        run.dir = "rtl";
        parent.appendChild(run);
      }
      run.appendChild(node);
    };
    /** @param {number} from @param {number} to @param {boolean} inRun */
    const text = (from, to, inRun) => {
      const edges = span ? [span.start_char, span.end_char].filter((c) => c > from && c < to) : [];
      const cuts = [from, ...edges, to];
      for (let k = 0; k + 1 < cuts.length; k += 1) {
        const piece = doc.text.slice(cuts[k], cuts[k + 1]);
        const cut = piece.lastIndexOf("\n") + 1;
        if (cut > 0 && block !== fragment && target(cuts[k]) === block) {
          place(document.createTextNode(piece.slice(0, cut)), cuts[k], false);
          newBlock();
          if (cut < piece.length) place(document.createTextNode(piece.slice(cut)), cuts[k] + cut, false);
        } else place(document.createTextNode(piece), cuts[k], inRun);
      }
    };
    /** @type {HTMLElement[]} */ const nodes = [];
    let previous = 0;
    tokens.forEach(([start, end], i) => {
      if (start > previous) text(previous, start, i > 0 && rightToLeft[i - 1] && rightToLeft[i]);
      const token = el("span", doc.text.slice(start, end), shown.selectable ? "tok" : "plain-tok");
      if (shown.selectable) {
        token.dataset.d = String(d);
        token.dataset.i = String(i);
        nodes.push(token);
      }
      // A token that reaches into the answer from before it is part of the answer.
      const inAnswer = span && start < span.start_char && end > span.start_char;
      place(token, inAnswer ? /** @type {AnswerSpan} */ (span).start_char : start, rightToLeft[i]);
      previous = end;
    });
    if (previous < doc.text.length) text(previous, doc.text.length, false);
    if (mark) /** @type {HTMLElement} */ (mark).appendChild(el("span", gettext(" (end of gold answer)"), "sr-only"));
    if (shown.selectable && this.runMarks) {
      // The text in a block of its own beside the numbers' layer: a number added is then
      // laid out alone, outside the text's lines.
      this.runMarks.addDocument(d, box);
      box.appendChild(el("div", undefined, "doc-text")).appendChild(fragment);
    } else box.appendChild(fragment);
    if (shown.selectable) {
      box.addEventListener("pointerdown", (e) => this.onPointerDown(/** @type {PointerEvent} */ (e)));
      // A long press selects; the browser's menu for it would cover the text.
      box.addEventListener("contextmenu", (e) => { if (this.touch || this.selection.drag) e.preventDefault(); });
    }
    this.tokenNodes[d] = nodes;
    return box;
  }

  /** @param {number} d @param {number} i */
  paintToken(d, i) {
    const node = this.tokenNodes[d] && this.tokenNodes[d][i];
    if (!node) return;
    const { first, count, runStart } = this.rationale.marksOf(this.docs[d].doc.docid, i);
    const className = "tok" + (first >= 0 ? ` sel set-${first % COLOURS}` : "") + (count > 1 ? " multi" : "")
      + (runStart ? " run-start" : "") + (this.selection.isCursor(d, i) ? " cursor" : "")
      + this.suggestionClass(this.docs[d].doc.docid, i, count > 0);
    // Only what changes is written: an unchanged token is not touched (nor restyled).
    if (node.className !== className) {
      node.className = className;
      if (node.classList.contains("suggested")) node.title = gettext("Suggested by a model");
      else node.removeAttribute("title");
    }
    const number = first >= 0 ? String(first + 1) : undefined;
    if (node.dataset.setNumber !== number) {
      if (number === undefined) delete node.dataset.setNumber;
      else node.dataset.setNumber = number;
    }
    this.runMarks?.show({ doc: d, token: i }, node, runStart ? first : -1);
  }

  /** A suggested token's class and its words for screen readers, where suggestions show.
   * @param {string} docid @param {number} i @param {boolean} highlighted */
  suggestionClass(docid, i, highlighted) {
    const s = this.suggestions;
    if (!s || s.hidden || !s.isSuggested(docid, i)) return "";
    return s.isAccepted(docid, i) && highlighted ? " suggested accepted" : " suggested";
  }

  refreshAll() {
    this.tokenNodes.forEach((nodes, d) => nodes.forEach((_, i) => this.paintToken(d, i)));
    this.renderLegend();
  }

  /** Repaints the tokens whose marks differ between two states of the sets, and only
   * those. @param {import("./rationale_sets.js").SetEntries[]} before */
  repaintSince(before) {
    const byDocid = new Map(this.docs.map((shown, d) => [shown.doc.docid, d]));
    for (const [docid, tokens] of tokensDiffering(before, this.rationale.toEntries())) {
      const d = byDocid.get(docid);
      if (d !== undefined) for (const i of tokens) this.paintToken(d, i);
    }
    this.renderLegend();
  }

  renderLegend() {
    const legend = /** @type {HTMLElement} */ (this.root.querySelector(".legend"));
    const current = this.rationale.current;
    // The chips are kept and changed in place: a change rewrites one chip's count, not the legend.
    while (legend.children.length > this.rationale.count) legend.lastElementChild?.remove();
    for (let s = 0; s < this.rationale.count; s += 1) {
      const count = this.rationale.tokenCount(s);
      let chip = /** @type {HTMLElement|undefined} */ (legend.children[s]);
      if (!chip) {
        chip = el("button", undefined, "legend-set");
        /** @type {HTMLButtonElement} */ (chip).type = "button";
        chip.dataset.set = String(s);
        chip.dataset.setNumber = String(s + 1);
        chip.addEventListener("click", () => { this.rationale.choose(s); this.renderLegend(); });
        legend.appendChild(chip);
      }
      const text = interpolate(ngettext("Set %(set)s: %(count)s token", "Set %(set)s: %(count)s tokens", count), { set: s + 1, count }, true);
      if (chip.textContent !== text) chip.textContent = text;
      const className = `legend-set set-${s % COLOURS}${s === current ? " current" : ""}`;
      if (chip.className !== className) chip.className = className;
      if (chip.getAttribute("aria-pressed") !== String(s === current)) chip.setAttribute("aria-pressed", String(s === current));
    }
    const suggestionCount = this.root.querySelector(".suggestion-count");
    if (suggestionCount && this.suggestions) {
      const accepted = /** @type {any[]} */ (this.acceptedSuggestions()).length;
      suggestionCount.textContent = interpolate(gettext("%(accepted)s of %(count)s accepted"), { accepted, count: this.suggestions.tokens.length }, true);
    }
    for (const counter of this.root.querySelectorAll(".doc-count")) {
      const marked = this.rationale.highlightedIn(/** @type {HTMLElement} */ (counter).dataset.docid || "");
      const text = marked ? interpolate(gettext("%(count)s highlighted"), { count: marked }, true) : "";
      if (counter.textContent !== text) counter.textContent = text;
    }
  }

  // ------------------------------------------------------------ editing

  /** Keeps the sets as they are before a change, for undo. */
  remember() {
    this.history.record(this.rationale.toEntries());
  }

  /** Applies a run to the current set and repaints its tokens.
   * @param {TokenRun} run @param {"add"|"remove"} mode */
  applyRun(run, mode) {
    this.rationale.applyRun(this.docs[run.doc].doc.docid, run.from, run.to, mode);
    this.paintRun(run);
  }

  /** @param {TokenRun} run */
  paintRun(run) {
    for (let i = run.from; i <= run.to; i += 1) this.paintToken(run.doc, i);
    this.paintToken(run.doc, run.to + 1); // where a run now begins or no longer does
  }

  changed() {
    this.renderLegend();
    this.draftUnsaved = true;
    window.clearTimeout(this.saveTimer);
    this.saveTimer = window.setTimeout(() => this.saveDraft(), 600);
    try { localStorage.setItem(this.localKey(), JSON.stringify(this.serialize())); } catch (_) { /* full */ }
  }

  /** A change not yet on the server goes now, in a request that outlives the page: the
   * annotator is leaving (pagehide) or hiding the tab, and the 600 ms autosave would not come. */
  flushDraft() {
    if (!this.draftUnsaved) return;
    window.clearTimeout(this.saveTimer);
    this.saveDraft({ keepalive: true });
  }

  /** @param {{keepalive?: boolean}} [options] */
  async saveDraft(options = {}) {
    if (!this.assignment || this.submitting || this.testMode) return;
    this.draftUnsaved = false;
    const response = await api(`/api/assignments/${this.assignment.id}/draft/`, "PUT", { draft: this.serialize() }, options);
    if (!response.ok) this.draftUnsaved = true;
    this.root.dataset.draftSaved = response.ok ? "true" : "false";
    if (response.ok) this.showMessage(gettext("Draft saved."), "muted");
    else {
      // The browser's own copy (localStorage) still holds the draft; the next change retries.
      this.showMessage(interpolate(gettext("Draft not saved on the server: %(error)s"), { error: errorText(response.data) }, true), "error");
    }
  }

  /** The token under a point of the screen, if it is one of the item's. @param {number} x @param {number} y
   * @returns {TokenPosition|null} */
  tokenAt(x, y) {
    const target = document.elementFromPoint(x, y);
    if (!(target instanceof HTMLElement) || !target.classList.contains("tok") || target.dataset.i === undefined) return null;
    return { doc: Number(target.dataset.d), token: Number(target.dataset.i) };
  }

  /** A mouse or a pen starts a run at once; a finger either taps a token (on release), or
   * holds it for LONG_PRESS_MS to start a run it then drags, or moves away first to scroll.
   * @param {PointerEvent} event */
  onPointerDown(event) {
    if (event.button > 0) return;
    const target = /** @type {HTMLElement} */ (event.target);
    if (!target.classList.contains("tok") || target.dataset.i === undefined) return;
    const at = { doc: Number(target.dataset.d), token: Number(target.dataset.i) };
    if (event.pointerType === "touch") {
      this.cancelTouch();
      const touch = { at, x: event.clientX, y: event.clientY, timer: 0 };
      touch.timer = window.setTimeout(() => {
        if (this.touch !== touch) return;
        this.touch = null;
        this.startRun(at, false);
      }, LONG_PRESS_MS);
      this.touch = touch;
      return;
    }
    event.preventDefault();
    this.startRun(at, event.shiftKey);
  }

  /** @param {TokenPosition} at @param {boolean} extend */
  startRun(at, extend) {
    // The keys select tokens again, not the label picker last clicked.
    const focused = document.activeElement;
    if (focused instanceof HTMLElement && focused !== document.body) focused.blur();
    this.remember();
    const extended = extend ? this.selection.extendTo(at) : null;
    if (extended) {
      this.applyRun(extended, "add");
      this.moveCursor(at);
      this.changed();
      return;
    }
    const docid = this.docs[at.doc].doc.docid;
    const mode = this.rationale.has(docid, at.token) ? "remove" : "add";
    // A click on a suggestion shown is its acceptance.
    if (mode === "add" && this.suggestions && !this.suggestions.hidden) this.suggestions.accept(docid, at.token);
    // What the current set held in this document before the drag: tokens the drag comes
    // back over return to it.
    this.dragBase = new Set(this.rationale.tokensIn(docid));
    this.applyRun(this.selection.press(at, mode), mode);
    this.moveCursor(at);
  }

  /** @param {PointerEvent} event */
  onPointerMove(event) {
    if (this.touch) {
      // A finger that moves before the long press is scrolling, not selecting.
      if (Math.hypot(event.clientX - this.touch.x, event.clientY - this.touch.y) > TOUCH_SLOP_PX) this.cancelTouch();
      return;
    }
    const drag = this.selection.drag;
    if (!drag) return;
    // The token under the pointer (a touch keeps its first target as the event's target).
    const at = this.tokenAt(event.clientX, event.clientY);
    if (!at) return;
    const step = this.selection.dragStep(at);
    if (!step) return;
    // Exactly the run from where the drag began to the pointer: what it covered a step
    // ago and no longer does goes back to how it was (only those tokens are repainted).
    const docid = this.docs[at.doc].doc.docid;
    for (const left of step.uncovered) {
      for (let i = left.from; i <= left.to; i += 1) {
        this.rationale.applyRun(docid, i, i, this.dragBase.has(i) ? "add" : "remove");
      }
      this.paintRun(left);
    }
    this.applyRun(step.run, drag.mode);
    this.moveCursor(at);
  }

  /** @param {PointerEvent} event */
  onPointerUp(event) {
    if (this.touch) {
      // A tap: the token toggles, as a click does.
      const { at } = this.touch;
      this.cancelTouch();
      if (event.pointerType === "touch") {
        this.startRun(at, false);
        this.endDrag();
      }
      return;
    }
    this.endDrag();
  }

  cancelTouch() {
    if (this.touch) window.clearTimeout(this.touch.timer);
    this.touch = null;
  }

  endDrag() {
    if (this.selection.release()) this.changed();
  }

  /** @param {TokenPosition} to */
  moveCursor(to) {
    const from = this.selection.moveCursor(to);
    this.paintToken(from.doc, from.token);
    this.paintToken(to.doc, to.token);
  }

  /** @param {KeyboardEvent} event */
  onKey(event) {
    if (!this.assignment || this.submitting || this.paused) return;
    // The shortcuts dialog has the keyboard while it is open (Esc closes it natively).
    if (document.querySelector("dialog[open]")) return;
    const target = /** @type {HTMLElement} */ (event.target);
    if (["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) || target.isContentEditable) {
      // Enter in the label picker (a chosen option, a typed answer) still submits.
      if (event.key === "Enter" && target.tagName === "INPUT" && target.closest(".ws-layout")) {
        event.preventDefault();
        this.submit();
      }
      return;
    }
    if (event.key === "?") {
      event.preventDefault();
      this.openShortcuts();
      return;
    }
    // Enter or Space on a focused button (Clear all, a set chip) presses that button.
    if ((event.key === "Enter" || event.key === " ") && ["BUTTON", "SUMMARY", "A"].includes(target.tagName)) return;
    const { doc, token } = this.selection.cursor;
    if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
      event.preventDefault();
      const lengths = this.tokenNodes.map((nodes) => nodes.length);
      const next = stepFrom(this.selection.cursor, event.key === "ArrowRight" ? 1 : -1, lengths);
      if (!this.tokenNodes[next.doc] || !this.tokenNodes[next.doc][next.token]) return;
      if (event.shiftKey) { this.remember(); this.applyRun({ doc: next.doc, from: next.token, to: next.token }, "add"); this.changed(); }
      this.moveCursor(next);
      this.tokenNodes[next.doc][next.token].scrollIntoView({ block: "nearest" });
    } else if (event.key === " ") {
      event.preventDefault();
      if (!this.tokenNodes[doc] || !this.tokenNodes[doc][token]) return;
      this.remember();
      this.rationale.toggle(this.docs[doc].doc.docid, token);
      this.paintRun({ doc, from: token, to: token });
      this.changed();
    } else if (event.key === "p") {
      // The previous items (the draft is flushed on leaving, as for any navigation).
      window.location.assign(`/projects/${this.projectId}/answers/?open=latest`);
    } else if (event.key === "]" || event.key === "[") {
      event.preventDefault();
      this.jumpToHighlight(event.key === "]" ? 1 : -1);
    } else if (event.key === "s") {
      this.jumpToNextSet();
    } else if (event.key === "n") {
      this.nextSet();
    } else if (event.key === "a" && this.suggestions) {
      this.acceptAtCursor();
    } else if (event.key === "A" && this.suggestions) {
      this.acceptAllSuggestions();
    } else if (/^[1-9]$/.test(event.key) && Number(event.key) <= this.rationale.count) {
      this.rationale.choose(Number(event.key) - 1);
      this.renderLegend();
    } else if (event.key === "y" || (event.key === "Y" && event.ctrlKey) || (event.key === "Z" && event.ctrlKey)) {
      // y, Ctrl+Y and Ctrl+Shift+Z redo, as in most editors.
      this.redo();
    } else if (event.key === "z") {
      this.undo();
    } else if (event.key === "Enter") {
      event.preventDefault();
      this.submit();
    }
  }

  nextSet() {
    const before = this.rationale.toEntries();
    if (this.rationale.startNew()) this.history.record(before);
    this.changed();
  }

  undo() {
    const present = this.rationale.toEntries();
    const previous = this.history.undo(present);
    if (!previous) return;
    // Only the sets step back: the label, the UUID and the time spent are not edits.
    this.rationale = RationaleSets.fromEntries(previous, this.rationale.current);
    this.repaintSince(present);
    this.changed();
  }

  redo() {
    const present = this.rationale.toEntries();
    const next = this.history.redo(present);
    if (!next) return;
    this.rationale = RationaleSets.fromEntries(next, this.rationale.current);
    this.repaintSince(present);
    this.changed();
  }

  /** @param {boolean} all */
  clearSet(all) {
    const present = this.rationale.toEntries();
    this.history.record(present);
    if (all) this.rationale.clearAll(); else this.rationale.clearCurrent();
    this.repaintSince(present);
    this.changed();
  }

  /** The cursor to a token, brought to the middle of the screen. @param {TokenPosition} at */
  jumpTo(at) {
    const node = this.tokenNodes[at.doc] && this.tokenNodes[at.doc][at.token];
    if (!node) return;
    this.moveCursor(at);
    node.scrollIntoView({ block: "center" });
  }

  /** The next (or previous) highlight's first token, of any set or of one.
   * @param {number} step +1 or -1 @param {number} [set] */
  jumpToHighlight(step, set) {
    const entries = this.rationale.toEntries();
    const starts = this.docs.map((shown, d) => (this.tokenNodes[d].length ? runStarts(entries, shown.doc.docid, set) : []));
    const at = jumpFrom(this.selection.cursor, step, starts);
    if (at) this.jumpTo(at);
  }

  /** The next set becomes the current one (after the last, the first), and the cursor goes
   * to its first highlight. */
  jumpToNextSet() {
    this.rationale.choose((this.rationale.current + 1) % this.rationale.count);
    this.renderLegend();
    const entries = this.rationale.toEntries();
    const starts = this.docs.map((shown, d) => (this.tokenNodes[d].length ? runStarts(entries, shown.doc.docid, this.rationale.current) : []));
    const at = jumpFrom({ doc: 0, token: -1 }, 1, starts);
    if (at) this.jumpTo(at);
  }

  // ------------------------------------------------------------ submitting

  async submit() {
    if (!this.assignment || this.submitting) return;
    const sets = this.rationale.spans();
    const total = sets.flat().reduce((n, s) => n + s.end_token - s.start_token, 0);
    if (total < this.assignment.project.min_highlight) {
      const least = this.assignment.project.min_highlight;
      this.showMessage(interpolate(ngettext("Highlight at least %(count)s word before submitting.",
        "Highlight at least %(count)s words before submitting.", least), { count: least }, true), "error");
      return;
    }
    const picking = this.picksLabel();
    if (picking && !this.label) {
      const typed = this.taskType() === "reading_comprehension" && !this.assignment.project.labels.length;
      this.showMessage(this.taskType() === "multiple_choice" ? gettext("Choose an option before submitting.")
        : typed ? gettext("Choose the answer (or No answer) before submitting.")
          : gettext("Choose a label before submitting."), "error");
      /** @type {HTMLElement|null} */ (this.root.querySelector(".options input, .choices input, .answer-picker input"))?.focus();
      return;
    }
    this.submitting = true;
    if (this.submitButton) this.submitButton.disabled = true;
    window.clearTimeout(this.saveTimer);
    let response;
    try {
      response = this.testMode
        ? await api(`/api/projects/${this.projectId}/qualification/answers/`, "POST", {
          gold_item: this.assignment.id, rationale_sets: sets, time_spent_ms: this.timeSpent(),
        })
        : await api(`/api/assignments/${this.assignment.id}/submit/`, "POST", this.submitBody(sets, picking));
    } finally {
      // Whatever happened, the annotator can press Submit again.
      this.submitting = false;
      if (this.submitButton) this.submitButton.disabled = false;
    }
    if (!response.ok) {
      this.showMessage(response.networkError
        ? interpolate(gettext("Not submitted: %(error)s Your highlights are kept; press Submit again."), { error: errorText(response.data) }, true)
        : errorText(response.data), "error");
      return;
    }
    this.forgetSubmit();
    try { localStorage.removeItem(this.localKey()); } catch (_) { /* ignore */ }
    this.root.dataset.lastSubmitted = String(this.assignment.id);
    this.showMessage(response.data.late ? gettext("Submitted (your lease had expired, but your work was kept).")
      : gettext("Submitted. Loading the next item…"), "ok");
    if (this.assignmentId) {
      window.location.href = `/projects/${this.assignment.project.id}/annotate/`;
      return;
    }
    await this.start();
  }

  /** The submit's body: the frozen one while the annotator's choice is unchanged, else a
   * new one, kept in this tab's sessionStorage for a retry after a reload.
   * @param {TokenSpan[][]} sets @param {boolean} picking */
  submitBody(sets, picking) {
    const toSend = submitToSend(this.pendingSubmit, {
      sets, picking, label: this.label, clientUuid: this.clientUuid, timeSpentMs: this.timeSpent(),
      accepted: this.acceptedSuggestions(), newUuid: () => crypto.randomUUID(),
    });
    if (toSend === this.pendingSubmit) return toSend.body;
    this.pendingSubmit = toSend;
    this.clientUuid = toSend.body.client_uuid;
    try { sessionStorage.setItem(this.submitKey(), JSON.stringify(toSend)); } catch (_) { /* full: kept in memory */ }
    return toSend.body;
  }

  forgetSubmit() {
    this.pendingSubmit = null;
    try { sessionStorage.removeItem(this.submitKey()); } catch (_) { /* ignore */ }
  }

  async skip() {
    if (!this.assignment) return;
    const response = await api(`/api/assignments/${this.assignment.id}/skip/`, "POST");
    if (!response.ok) {
      this.showMessage(errorText(response.data), "error");
      return;
    }
    this.forgetSubmit();
    try { localStorage.removeItem(this.localKey()); } catch (_) { /* ignore */ }
    await this.start();
  }

  /** A link back to the projects page, where the worker's other projects are. */
  homeLink() {
    const link = el("a", gettext("Go to your projects"));
    link.href = "/";
    const line = el("p");
    line.append(link);
    return line;
  }

  /** "No more items", with why (a reason code from the server) and where to go.
   * @param {any} data */
  renderDone(data) {
    const body = /** @type {HTMLElement} */ (this.root.querySelector(".workspace-body"));
    const why = /** @type {Record<string, [string, string]>} */ ({
      no_items: [gettext("No items yet"), gettext("This project has no items to annotate yet. Come back once its admin has imported data; your other projects are on the home page.")],
      done_by_you: [gettext("Your share is done"), gettext("You have annotated every item of this project that can be given to you: your share here is done. Thank you! Your other projects are on the home page.")],
      leased_by_others: [gettext("Everything left is taken for now"), gettext("Every remaining item is being annotated by others right now. An item comes back when its annotator skips it or their time runs out: try again in a few minutes.")],
      complete: [gettext("This project is complete"), gettext("Every item has all the annotations it needs: nothing is left to do in this project. Your other projects are on the home page.")],
    })[data.code];
    const box = el("div", undefined, `done done-${data.code || "none"}`);
    box.append(el("h2", why ? why[0] : gettext("No more items")), el("p", why ? why[1] : data.detail || gettext("No more items.")));
    if (data.code === "leased_by_others") {
      const again = this.button(gettext("Try again"), "secondary", () => this.start());
      box.append(again);
    }
    box.append(this.homeLink());
    body.replaceChildren(box);
    this.root.dataset.doneReason = data.code || "";
    this.assignment = null;
    this.root.dataset.ready = "true";
    this.root.dataset.done = "true";
  }

  /** @param {string} text @param {string} kind */
  showMessage(text, kind) {
    const box = /** @type {HTMLElement} */ (this.root.querySelector(".message"));
    // The same line again (each autosave's "Draft saved.") is not rewritten, nor laid out.
    if (box.textContent !== text) box.textContent = text;
    if (box.className !== `message ${kind}`) box.className = `message ${kind}`;
  }
}

const root = document.getElementById("workspace");
if (root) {
  const workspace = new Workspace(root);
  // Exposed for the browser tests and the latency benchmark.
  /** @type {any} */ (window).rationaleWorkspace = workspace;
  workspace.start();
}
