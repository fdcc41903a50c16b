// @ts-check
// The item page's plain data: which tokens each annotation highlighted (by set), how a
// long document is cut into rows that every annotation shares (so their tokens line up),
// what a revision added and removed, and how the agreement strip shades a token. No DOM,
// so that `node --test` checks it; data_item.js paints it.

/** @typedef {{docid: string, start_token: number, end_token: number}} Span */
/** @typedef {{position: number, spans: Span[]}} RationaleSetData */
/** Per docid, per token index: the first set (from 0) that holds it.
 * @typedef {Map<string, Map<number, number>>} SetsByToken */

/** The longest row, in tokens: a sentence longer than this is cut, so a row fits a line or
 * two and every annotation's copy of it stays beside the others. */
export const ROW_TOKENS = 40;

/** Per document and token, the first rationale set that holds the token.
 * @param {RationaleSetData[]} sets @returns {SetsByToken} */
export function setsByToken(sets) {
  /** @type {SetsByToken} */ const found = new Map();
  const ordered = [...sets].sort((a, b) => a.position - b.position);
  ordered.forEach((set, index) => {
    for (const span of set.spans) {
      let tokens = found.get(span.docid);
      if (!tokens) {
        tokens = new Map();
        found.set(span.docid, tokens);
      }
      for (let t = span.start_token; t < span.end_token; t += 1) {
        if (!tokens.has(t)) tokens.set(t, index);
      }
    }
  });
  return found;
}

/** Every token an annotation highlighted, per document, whatever the set.
 * @param {RationaleSetData[]} sets @returns {Map<string, Set<number>>} */
export function highlightedTokens(sets) {
  /** @type {Map<string, Set<number>>} */ const found = new Map();
  for (const [docid, tokens] of setsByToken(sets)) found.set(docid, new Set(tokens.keys()));
  return found;
}

/** The rows a document is shown in: its sentences, each cut to at most `limit` tokens; a
 * document without sentences is cut every `limit` tokens. Rows cover every token once, in
 * order. @param {number} tokenCount @param {number[][]} sentences @param {number} [limit]
 * @returns {Array<[number, number]>} half-open token ranges */
export function tokenRows(tokenCount, sentences, limit = ROW_TOKENS) {
  /** @type {Array<[number, number]>} */ const rows = [];
  let next = 0;
  /** @param {number} start @param {number} end */
  const cut = (start, end) => {
    for (let s = start; s < end; s += limit) rows.push([s, Math.min(end, s + limit)]);
  };
  for (const [start, end] of sentences) {
    if (end <= next || start >= tokenCount) continue;
    if (start > next) cut(next, start);
    cut(Math.max(start, next), Math.min(end, tokenCount));
    next = Math.min(end, tokenCount);
  }
  if (next < tokenCount) cut(next, tokenCount);
  return rows;
}

/** What a revision changed: per document, the tokens it added and those it removed.
 * @param {RationaleSetData[]} before @param {RationaleSetData[]} after
 * @returns {Map<string, {added: number[], removed: number[]}>} */
export function revisionDiff(before, after) {
  const was = highlightedTokens(before);
  const now = highlightedTokens(after);
  /** @type {Map<string, {added: number[], removed: number[]}>} */ const diff = new Map();
  for (const docid of new Set([...was.keys(), ...now.keys()])) {
    const old = was.get(docid) || new Set();
    const fresh = now.get(docid) || new Set();
    const added = [...fresh].filter((t) => !old.has(t)).sort((a, b) => a - b);
    const removed = [...old].filter((t) => !fresh.has(t)).sort((a, b) => a - b);
    if (added.length || removed.length) diff.set(docid, { added, removed });
  }
  return diff;
}

/** The strip's colour step of a share (0..1): 0 for none, then 1 to `steps`, the last for
 * every annotator. @param {number} share @param {number} [steps] */
export function shareStep(share, steps = 5) {
  if (!(share > 0)) return 0;
  if (share >= 1) return steps;
  return Math.min(steps - 1, Math.max(1, Math.ceil(share * (steps - 1))));
}

/** How many tokens all annotators, some of them, and none highlighted: the strip in words.
 * @param {number[]} shares */
export function agreementCounts(shares) {
  let all = 0;
  let some = 0;
  let none = 0;
  for (const share of shares) {
    if (share >= 1) all += 1;
    else if (share > 0) some += 1;
    else none += 1;
  }
  return { all, some, none };
}

/** The annotations that are their annotator's latest round (none revises them).
 * @template {{id: number, revision_of: number|null}} A @param {A[]} annotations @returns {A[]} */
export function latestRounds(annotations) {
  const revised = new Set(annotations.map((a) => a.revision_of).filter((id) => id !== null));
  return annotations.filter((a) => !revised.has(a.id));
}
