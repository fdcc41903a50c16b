// @ts-check
// The curator's operations on rationale sets, as plain data (no DOM, no window), so that
// `node --test` checks them: the union or intersection of chosen sets, the tokens at least k
// annotators marked, and how many annotators marked each token. A set is the API's shape,
// {docid: [token index, ...]}; an annotation is a list of sets, and its tokens are the union
// of them. The server applies the same rules to the auto-merge (qc/curation_rules.py).

/** One rationale set: each document's highlighted token indexes, ascending.
 * @typedef {Record<string, number[]>} TokenSet */
/** One annotation's sets, in order. @typedef {TokenSet[]} AnnotationSets */

/** @param {Map<string, Set<number>>} found @returns {TokenSet} */
function asTokenSet(found) {
  /** @type {TokenSet} */ const set = {};
  for (const [docid, tokens] of found) {
    if (tokens.size) set[docid] = [...tokens].sort((a, b) => a - b);
  }
  return set;
}

/** How many of `sets` hold each token, per document.
 * @param {TokenSet[]} sets @returns {Map<string, Map<number, number>>} */
function counts(sets) {
  /** @type {Map<string, Map<number, number>>} */ const found = new Map();
  for (const set of sets) {
    for (const [docid, tokens] of Object.entries(set)) {
      const perDoc = found.get(docid) ?? new Map();
      found.set(docid, perDoc);
      for (const token of new Set(tokens)) perDoc.set(token, (perDoc.get(token) ?? 0) + 1);
    }
  }
  return found;
}

/** Tokens held by at least `needed` of `sets`. @param {TokenSet[]} sets @param {number} needed */
function heldByAtLeast(sets, needed) {
  /** @type {Map<string, Set<number>>} */ const found = new Map();
  for (const [docid, perDoc] of counts(sets)) {
    found.set(docid, new Set([...perDoc].filter(([, n]) => n >= needed).map(([token]) => token)));
  }
  return asTokenSet(found);
}

/** Every token any of the sets holds. @param {TokenSet[]} sets @returns {TokenSet} */
export function unionOf(sets) {
  return heldByAtLeast(sets, 1);
}

/** The tokens every one of the sets holds; nothing when there is no set.
 * @param {TokenSet[]} sets @returns {TokenSet} */
export function intersectionOf(sets) {
  return sets.length ? heldByAtLeast(sets, sets.length) : {};
}

/** All the tokens of one annotation, in any of its sets. @param {AnnotationSets} sets */
export function annotationTokens(sets) {
  return unionOf(sets);
}

/** The tokens at least `k` annotations marked (k of at most 0 counts as 1).
 * @param {AnnotationSets[]} annotations @param {number} k @returns {TokenSet} */
export function markedByAtLeast(annotations, k) {
  return heldByAtLeast(annotations.map(annotationTokens), Math.max(1, Math.floor(k)));
}

/** How many annotations marked each token: {docid: {token: count}}, tokens nobody marked
 * left out. @param {AnnotationSets[]} annotations @returns {Record<string, Record<number, number>>} */
export function markCounts(annotations) {
  /** @type {Record<string, Record<number, number>>} */ const found = {};
  for (const [docid, perDoc] of counts(annotations.map(annotationTokens))) {
    found[docid] = Object.fromEntries(perDoc);
  }
  return found;
}

/** How many tokens a set holds, over its documents. @param {TokenSet} set */
export function setSize(set) {
  return Object.values(set).reduce((n, tokens) => n + tokens.length, 0);
}

/** A set as RationaleSets entries ([docid, tokens] pairs), documents in the item's order.
 * @param {TokenSet} set @param {string[]} docOrder @returns {Array<[string, number[]]>} */
export function toEntries(set, docOrder) {
  const known = docOrder.filter((docid) => (set[docid] || []).length);
  const others = Object.keys(set).filter((docid) => !docOrder.includes(docid) && set[docid].length).sort();
  return [...known, ...others].map((docid) => [docid, [...set[docid]]]);
}

/** RationaleSets entries back as a set. @param {Array<[string, number[]]>} entries @returns {TokenSet} */
export function fromEntries(entries) {
  return unionOf([Object.fromEntries(entries)]);
}
