// @ts-check
// Model suggestions in the workspace: the tokens an explainer scored highest, shown apart
// from the annotator's own highlights under a variant that shows them. The annotator
// accepts them (one, or all) into the current set, or hides them; a suggestion is sent as
// accepted only while an accepted token is still highlighted, so removing it again undoes
// the acceptance. Plain data only (no DOM), so that `node --test` can check it.

/** @typedef {{docid: string, token: number}} SuggestedToken */

/** @param {string} docid @param {number} token */
function keyOf(docid, token) {
  return `${docid}\u0000${token}`;
}

export class Suggestions {
  /** @param {[string, number][]} pairs the item's suggested tokens, [docid, token] */
  constructor(pairs) {
    /** @type {SuggestedToken[]} */
    this.tokens = pairs.map(([docid, token]) => ({ docid, token }));
    this.suggested = new Set(this.tokens.map((t) => keyOf(t.docid, t.token)));
    /** @type {Set<string>} */
    this.accepted = new Set();
    /** Hidden by the annotator ("Ignore"); accepted tokens stay accepted. */
    this.hidden = false;
  }

  /** @param {string} docid @param {number} token */
  isSuggested(docid, token) {
    return this.suggested.has(keyOf(docid, token));
  }

  /** @param {string} docid @param {number} token */
  isAccepted(docid, token) {
    return this.accepted.has(keyOf(docid, token));
  }

  /** Marks a suggested token accepted; false when it is not a suggestion.
   * @param {string} docid @param {number} token */
  accept(docid, token) {
    if (!this.isSuggested(docid, token)) return false;
    this.accepted.add(keyOf(docid, token));
    return true;
  }

  /** Every suggestion, marked accepted. @returns {SuggestedToken[]} the tokens to highlight */
  acceptAll() {
    for (const t of this.tokens) this.accepted.add(keyOf(t.docid, t.token));
    return this.tokens;
  }

  /** The accepted tokens that are still highlighted, in the suggestions' order: what the
   * submit sends as `suggestions_accepted`.
   * @param {(docid: string, token: number) => boolean} highlighted
   * @returns {SuggestedToken[]} */
  acceptedIn(highlighted) {
    return this.tokens.filter((t) => this.isAccepted(t.docid, t.token) && highlighted(t.docid, t.token));
  }
}
