// @ts-check
// Reviewer queue: one annotation at a time, read-only highlights, scores per rationale set
// (sufficiency, compactness) and per annotation (comprehensiveness), earlier rounds and
// what changed since the last one. Every server string is inserted as text.

import { api, el, errorText, fmt } from "./http.js";

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

/**
 * Render documents with the tokens of each set coloured; `diff` marks added tokens and
 * shows removed ones struck through. Read-only: no selection handlers.
 * @param {any[]} documents @param {any[]} sets @param {any} [diff]
 */
function renderDocuments(documents, sets, diff) {
  const box = el("div", undefined, "documents");
  for (const doc of documents) {
    const view = el("div", undefined, "document");
    view.dataset.docid = doc.docid;
    const changes = (diff && diff[doc.docid]) || { added: [], removed: [] };
    const added = new Set(changes.added);
    const removed = new Set(changes.removed);
    let previous = 0;
    doc.tokens.forEach((/** @type {number[]} */ [start, end], /** @type {number} */ i) => {
      if (start > previous) view.appendChild(document.createTextNode(doc.text.slice(previous, start)));
      const token = el("span", doc.text.slice(start, end), "tok readonly");
      const inSets = sets.map((s, n) => ((s.tokens[doc.docid] || []).includes(i) ? n : -1)).filter((n) => n >= 0);
      if (inSets.length) {
        token.classList.add("sel", `set-${inSets[0] % COLOURS}`);
        token.title = inSets.map((n) => interpolate(gettext("set %(set)s"), { set: n + 1 }, true)).join(gettext(", "));
      }
      if (added.has(i)) token.classList.add("added");
      if (removed.has(i)) token.classList.add("removed");
      view.appendChild(token);
      previous = end;
    });
    if (previous < doc.text.length) view.appendChild(document.createTextNode(doc.text.slice(previous)));
    box.appendChild(view);
  }
  return box;
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
    /** @type {number|undefined} */ this.queueCount = undefined;
  }

  /** @param {string} text @param {string} kind */
  say(text, kind) {
    this.message.textContent = text;
    this.message.className = `message ${kind}`;
  }

  /** The reviewer's queue: pick any annotation, not only the oldest. */
  async loadQueue() {
    const response = await api(`/api/projects/${this.projectId}/reviews/queue/`, "GET");
    const box = /** @type {HTMLElement} */ (this.root.querySelector(".review-queue"));
    if (!box) return;
    if (!response.ok) { this.say(errorText(response.data), "error"); return; }
    this.queueCount = response.data.count;
    box.replaceChildren(el("h2", interpolate(gettext("Waiting for your review (%(count)s)"), response.data, true)));
    const table = el("table", undefined, "grid");
    const head = el("tr");
    [gettext("Annotation"), gettext("Item"), gettext("Round"), gettext("Variant"), gettext("Reviews so far"), gettext("Submitted"), ""]
      .forEach((h) => head.appendChild(el("th", h)));
    table.appendChild(head);
    for (const entry of response.data.results) {
      const row = el("tr");
      row.dataset.annotation = String(entry.id);
      [String(entry.id), entry.item, String(entry.round), entry.variant, String(entry.reviews_done),
        new Date(entry.submitted_at).toLocaleString()].forEach((text) => row.appendChild(el("td", text)));
      const open = /** @type {HTMLButtonElement} */ (el("button", gettext("Review")));
      open.type = "button";
      open.addEventListener("click", () => this.open(entry.id));
      const cell = el("td");
      cell.appendChild(open);
      row.appendChild(cell);
      table.appendChild(row);
    }
    box.appendChild(table);
  }

  /** @param {number} id */
  async open(id) {
    this.root.dataset.ready = "false";
    const response = await api(`/api/annotations/${id}/review/`, "GET");
    if (!response.ok) { this.say(errorText(response.data), "error"); return; }
    this.render({ ...response.data, queue: this.queueCount ?? "?" });
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
  }

  /** @param {any} a */
  render(a) {
    this.current = a;
    this.root.dataset.done = "false";
    const body = this.body;
    body.replaceChildren();
    body.appendChild(el("p", interpolate(gettext("Annotation %(id)s · round %(round)s of %(max_rounds)s · reviews %(reviews_done)s of %(reviews_needed)s · %(queue)s waiting for you"), a, true), "review-facts"));
    const instructions = el("details", undefined, "instructions");
    instructions.appendChild(el("summary", interpolate(gettext("Instructions the annotator saw (%(name)s, version %(version)s)"), a.variant, true)));
    instructions.appendChild(el("p", a.variant.text, "instruction-text"));
    body.appendChild(instructions);
    const facts = el("div", undefined, "facts-row");
    if (a.item.query) facts.appendChild(el("div", interpolate(gettext("Question: %(query)s"), { query: a.item.query }, true), "query"));
    facts.appendChild(el("div", interpolate(gettext("Answer: %(label)s"), { label: a.item.label ?? gettext("(none)") }, true), "gold-label"));
    body.appendChild(facts);
    body.appendChild(renderDocuments(a.item.documents, a.sets, a.diff));
    if (a.diff) body.appendChild(el("p", gettext("Underlined: added since the previous round. Struck through: removed since then."), "muted"));

    const form = /** @type {HTMLFormElement} */ (el("form", undefined, "review-form"));
    if (!a.sets.length) form.appendChild(el("p", gettext("This annotation has no highlighted tokens: it cannot be sufficient."), "error"));
    a.sets.forEach((/** @type {any} */ set, /** @type {number} */ n) => {
      const box = el("fieldset", undefined, `set-scores set-${n % COLOURS}`);
      box.dataset.set = String(set.id);
      const count = Object.values(set.tokens).flat().length;
      box.appendChild(el("legend", interpolate(ngettext("Set %(set)s (%(count)s token)", "Set %(set)s (%(count)s tokens)", count), { set: n + 1, count }, true)));
      box.appendChild(radioGroup(`sufficiency-${set.id}`, gettext("Sufficiency: could these tokens alone support the answer?"), SCALES.sufficiency));
      box.appendChild(radioGroup(`compactness-${set.id}`, gettext("Compactness"), SCALES.compactness));
      const comment = /** @type {HTMLInputElement} */ (el("input"));
      comment.name = `comment-${set.id}`;
      comment.placeholder = gettext("comment on this set (optional)");
      box.appendChild(comment);
      form.appendChild(box);
    });
    form.appendChild(radioGroup("comprehensiveness", gettext("Comprehensiveness: does the annotation cover all the evidence?"), SCALES.comprehensiveness));
    const overall = /** @type {HTMLTextAreaElement} */ (el("textarea"));
    overall.name = "comment";
    overall.rows = 2;
    overall.placeholder = gettext("comment for the annotator (optional)");
    form.appendChild(overall);
    const submit = /** @type {HTMLButtonElement} */ (el("button", gettext("Submit scores")));
    submit.type = "submit";
    form.appendChild(submit);
    form.addEventListener("submit", (event) => { event.preventDefault(); this.submit(form); });
    if (a.verdict) body.appendChild(el("p", interpolate(gettext("Decided: %(outcome)s."), { outcome: outcomeName(a.verdict.outcome) }, true), "muted"));
    else if (a.reviewed_by_you) body.appendChild(el("p", gettext("You have scored this annotation already."), "muted"));
    else body.appendChild(form);

    if (a.history.length) {
      const history = el("section", undefined, "history");
      history.appendChild(el("h2", gettext("Earlier rounds")));
      for (const earlier of a.history.slice().reverse()) {
        const round = el("details", undefined, "round");
        const verdict = earlier.verdict ? interpolate(gettext("%(outcome)s; failed: %(failed)s"), {
          outcome: outcomeName(earlier.verdict.outcome), failed: propertyList(earlier.verdict.failed) || gettext("none"),
        }, true) : "";
        round.appendChild(el("summary", interpolate(gettext("Round %(round)s: %(verdict)s"), { round: earlier.round, verdict }, true)));
        round.appendChild(renderDocuments(a.item.documents, earlier.sets));
        round.appendChild(reviewsTable(earlier.reviews));
        history.appendChild(round);
      }
      body.appendChild(history);
    }
    this.root.dataset.ready = "true";
    this.root.dataset.annotation = String(a.id);
  }

  /** @param {HTMLFormElement} form */
  async submit(form) {
    const data = new FormData(form);
    const a = this.current;
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
