// @ts-check
// A candidate's qualification-test answer as words: the item's text twice, side by side,
// the candidate's highlights on the left and the gold on the right, each word coloured by
// agreement (agreed, extra: only the candidate marked it, missed: only the gold has it).
// Each kind also has its own underline and a sign read out to screen readers, so the
// difference never rests on colour alone. Imported text goes in as text.

import { el } from "./http.js";
import { codeUnitsOf } from "./text_offsets.js";

/** @typedef {{docid: string, role?: string, text: string, tokens: number[][]}} AnswerDocument */
/** @typedef {"agreed"|"extra"|"missed"} Agreement */

/** Which tokens agree, per document: plain data, no DOM.
 * @param {Record<string, number[]>} candidate @param {Record<string, number[]>} gold */
export function tokenAgreement(candidate, gold) {
  /** @type {Record<string, Map<number, Agreement>>} */ const byDoc = {};
  const counts = { agreed: 0, extra: 0, missed: 0 };
  for (const docid of new Set([...Object.keys(candidate), ...Object.keys(gold)])) {
    const mine = new Set(candidate[docid] || []);
    const theirs = new Set(gold[docid] || []);
    const marks = new Map();
    for (const t of mine) {
      const kind = theirs.has(t) ? "agreed" : "extra";
      marks.set(t, kind);
      counts[kind] += 1;
    }
    for (const t of theirs) {
      if (!mine.has(t)) { marks.set(t, "missed"); counts.missed += 1; }
    }
    byDoc[docid] = marks;
  }
  return { byDoc, counts };
}

const SIGNS = /** @type {Record<Agreement, string>} */ ({
  agreed: gettext("(agreed)"),
  extra: gettext("(extra: only the candidate)"),
  missed: gettext("(missed: only the gold)"),
});

/** One side: the documents with the tokens of `show` kinds marked.
 * @param {AnswerDocument[]} documents @param {Record<string, Map<number, Agreement>>} byDoc
 * @param {Agreement[]} show @param {string} title @param {string} lang */
function side(documents, byDoc, show, title, lang) {
  const box = el("div", undefined, "answer-side");
  box.appendChild(el("h5", title, "answer-side-title"));
  for (const doc of documents) {
    const view = el("div", undefined, "answer-text");
    view.dataset.docid = doc.docid;
    if (lang) view.lang = lang;
    const marks = byDoc[doc.docid] || new Map();
    let previous = 0;
    // The server's offsets count code points; the text is sliced in UTF-16 units.
    const at = codeUnitsOf(doc.text);
    doc.tokens.forEach(([from, to], i) => {
      const start = at(from), end = at(to);
      if (start > previous) view.appendChild(document.createTextNode(doc.text.slice(previous, start)));
      const kind = marks.get(i);
      if (kind && show.includes(kind)) {
        const word = el("mark", doc.text.slice(start, end), `answer-word ${kind}`);
        word.appendChild(el("span", ` ${SIGNS[kind]}`, "sr-only"));
        view.appendChild(word);
      } else {
        view.appendChild(document.createTextNode(doc.text.slice(start, end)));
      }
      previous = end;
    });
    if (previous < doc.text.length) view.appendChild(document.createTextNode(doc.text.slice(previous)));
    box.appendChild(view);
  }
  return box;
}

/** The candidate's answer beside the gold, with a key counting each kind.
 * @param {{tokens: Record<string, number[]>, gold: Record<string, number[]>, documents: AnswerDocument[]}} answer
 * @param {string} [lang] */
export function answerBesideGold(answer, lang = "") {
  const { byDoc, counts } = tokenAgreement(answer.tokens, answer.gold);
  const box = el("div", undefined, "answer-compare");
  const key = el("p", undefined, "answer-key");
  for (const [kind, text] of /** @type {[Agreement, string][]} */ ([
    ["agreed", interpolate(gettext("%(count)s agreed"), { count: counts.agreed }, true)],
    ["extra", interpolate(gettext("%(count)s extra (only the candidate)"), { count: counts.extra }, true)],
    ["missed", interpolate(gettext("%(count)s missed (only the gold)"), { count: counts.missed }, true)],
  ])) {
    key.appendChild(el("span", text, `answer-word ${kind}`));
  }
  box.appendChild(key);
  const sides = el("div", undefined, "answer-sides");
  sides.appendChild(side(answer.documents, byDoc, ["agreed", "extra"], gettext("Candidate's highlights"), lang));
  sides.appendChild(side(answer.documents, byDoc, ["agreed", "missed"], gettext("Gold rationale"), lang));
  box.appendChild(sides);
  return box;
}
